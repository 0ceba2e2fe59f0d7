"""What must not drift apart: sources vs fixtures and tests, mappings vs reference, CLI vs README.

Every list here comes from the source registry; no test names a provider.
"""

from __future__ import annotations

import re
from dataclasses import fields

import polars as pl
import pytest
import typer.main

from gpucat.cli import app
from gpucat.schemas.gpu_models import GpuModelRow
from gpucat.schemas.offers import OfferRow
from gpucat.schemas.records import Offer, record_columns
from gpucat.schemas.reference import GPU_MODELS_CSV
from gpucat.scrapers import all_sources, sources_table
from tests.conftest import FIXTURES, ROOT
from tests.drift_checks import source_problems

SOURCES = sorted(all_sources())


@pytest.mark.parametrize("name", SOURCES)
def test_every_source_is_whole(name):
    """Fixtures (bodies, fresh manifest, NOTES.md), a parser test, schema-valid rows, and GPU
    mappings that target canonical models: see tests/drift_checks.py."""
    assert source_problems(all_sources()[name], FIXTURES, ROOT / "tests") == []


def test_gpu_models_reference_is_valid_and_broad():
    frame = GpuModelRow.validate(pl.read_csv(GPU_MODELS_CSV, infer_schema_length=None))
    assert frame.height >= 40
    assert {"NVIDIA", "AMD", "Intel", "Google"} <= set(frame["vendor"])


def test_the_offer_record_is_the_one_list_of_offer_columns():
    assert record_columns("offers") == [f.name for f in fields(Offer)]
    assert sorted(OfferRow.to_schema().columns) == sorted(record_columns("offers"))
    from gpucat.warehouse import db

    with db.connect(":memory:") as con:
        stored = {c for (c,) in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'offer_versions'").fetchall()}
        current = {c for (c,) in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'current_offers'").fetchall()}
    assert set(record_columns("offers")) <= stored
    assert set(record_columns("offers")) <= current


def test_readme_sources_table_is_the_registry():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- sources:begin -->\n(.*?)<!-- sources:end -->", readme, re.S)
    assert block, "README lacks the <!-- sources:begin --> ... <!-- sources:end --> block"
    assert block.group(1) == sources_table(), "README sources table is stale: run `uv run gpucat sources --markdown`"


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
    from gpucat.warehouse import db

    with db.connect(":memory:") as con:
        columns = con.execute("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'").fetchall()
    missing = [f"{t}.{c}" for t, c in columns if t != "schema_migrations" and f"| {c} |" not in doc]
    assert missing == []
