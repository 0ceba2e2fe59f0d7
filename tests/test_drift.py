"""What must not drift apart: sources vs fixtures and tests, mappings vs reference, CLI vs README."""

from __future__ import annotations

import re


import polars as pl
import pytest
import typer.main

from gpucat import pipeline
from gpucat.cli import app
from schemas.gpu_models import GpuModelRow
from scrapers import _aws, all_sources, azure_retail, runpod_graphql
from scrapers.capture import read_manifest
from tests.conftest import FIXTURES, ROOT
from schemas.reference import GPU_MODELS_CSV, gpu_models

SOURCES = sorted(all_sources())


def test_the_sources_this_issue_promises_are_registered():
    assert set(SOURCES) >= {"aws-pricelist", "aws-spot", "aws-spot-advisor", "azure-retail", "runpod-graphql"}


@pytest.mark.parametrize("name", SOURCES)
def test_every_source_has_replayable_fixtures(name):
    entries = [e for e in read_manifest(FIXTURES) if f"/{name}/" in f"/{e.body.relative_to(FIXTURES).as_posix()}"]
    assert entries, f"no fixtures for {name} in fixtures/manifest.jsonl"
    assert all(e.body.is_file() for e in entries)


@pytest.mark.parametrize("name", SOURCES)
def test_every_source_has_a_parser_test(name):
    module = all_sources()[name].parse.__module__.rsplit(".", 1)[1]
    assert (ROOT / "tests" / "scrapers" / f"test_{module}.py").is_file()


@pytest.mark.parametrize("name", SOURCES)
def test_every_source_fixture_parses_into_schema_valid_rows(name):
    source = all_sources()[name]
    entries = [e for e in read_manifest(FIXTURES) if f"/{name}/" in f"/{e.body.relative_to(FIXTURES).as_posix()}"]
    bodies = [e.body for e in entries if not e.body.name.startswith("region_index")]
    batch = pipeline.validate_source(source, pipeline.parse_source(source, pipeline.pages_from_files(bodies)), len(bodies))
    assert sum(b.frame.height for b in batch.batches) > 0
    # Parsers may reject rows for their own reasons; the schema must not have to.
    schema_failures = [r for b in batch.batches for r in b.rejected if any(x.split(":")[0] in b.frame.columns or x.startswith("row:") for x in r.reasons)]
    assert schema_failures == []


def test_gpu_models_reference_is_valid_and_broad():
    frame = GpuModelRow.validate(pl.read_csv(GPU_MODELS_CSV, infer_schema_length=None))
    assert frame.height >= 40
    assert set(frame["vendor"]) == {"NVIDIA", "AMD", "Intel", "Google"}


def test_every_provider_mapping_targets_a_canonical_gpu():
    targets = set(_aws.FAMILY_GPU.values()) | {f.gpu_model for f in azure_retail.SKU_FAMILIES} | set(runpod_graphql.GPU_IDS.values())
    assert targets - set(gpu_models()) == set()


def test_aws_instance_specs_cover_only_known_families():
    assert {_aws.family(t) for t in _aws.INSTANCES} <= set(_aws.FAMILY_GPU)


def commands() -> list[str]:
    return sorted(cmd.name for cmd in typer.main.get_command(app).commands.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", commands())
def test_every_command_has_help_and_a_readme_entry(command):
    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    assert (click_command.help or "").strip(), f"{command} has no help text"
    for param in click_command.params:
        if param.name != "help" and not getattr(param, "hidden", False):
            assert getattr(param, "help", None) or param.param_type_name == "argument", f"{command} --{param.name} has no help"
    readme = (ROOT / "README.md").read_text()
    assert re.search(rf"^### `gpucat {command}`", readme, re.M), f"README has no '### `gpucat {command}`' section"


def test_data_model_doc_names_every_column():
    doc = (ROOT / "docs" / "data-model.md").read_text()
    from warehouse import db

    with db.connect(":memory:") as con:
        columns = con.execute("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'").fetchall()
    missing = [f"{t}.{c}" for t, c in columns if t != "schema_migrations" and f"| {c} |" not in doc]
    assert missing == []


