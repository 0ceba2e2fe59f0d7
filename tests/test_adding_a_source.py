"""The three-file promise (docs/adding-a-source.md): a source is its module, its fixture folder
and its test. A throwaway source written to a temporary directory, with no other edit, is picked
up by the registry, replay, `gpucat parse`, `gpucat status` and the drift checks."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpucat import catalog, pipeline, scrapers
from gpucat.cli import app
from gpucat.warehouse import db
from tests.conftest import FIXTURES
from tests.drift_checks import source_problems

MODULE = '''
"""Toy Cloud's price list: a JSON list of GPU types, priced per GPU-hour."""

from gpucat.schemas.records import Offer, Rejected
from gpucat.scrapers import _json
from gpucat.scrapers.base import Source, each_record

URL = "https://api.toy.example/v1/prices"
GPUS = {"NVIDIA H100 80GB HBM3": "H100-SXM", "NVIDIA L4": "L4"}


def fetch(fetcher):
    yield fetcher.get(URL)


def parse(body, *, url, fetched_at):
    yield from each_record("offers", _json.page(body, "toy price list", "prices"), _offer)


def _offer(row):
    if row["gpu"] not in GPUS:
        return [Rejected("offers", (f"unknown_gpu: {row['gpu']!r}",), row)]
    return [Offer(
        offer_id=f"{row['gpu']}/{row['count']}x", instance_type=f"{row['count']}x {row['gpu']}", region="global",
        market="on_demand", gpu_name=row["gpu"], gpu_model=GPUS[row["gpu"]], gpu_count=float(row["count"]),
        price=row["usd"], price_unit="gpu_hour", currency="USD", availability="unknown",
    )]


SOURCE = Source(
    name="toy-prices", provider="toyco", description="Toy Cloud price list", tables=("offers",),
    hosts=frozenset({"api.toy.example"}), fetch=fetch, parse=parse, gpu_targets=frozenset(GPUS.values()),
)
'''

BODY = {"prices": [{"gpu": "NVIDIA H100 80GB HBM3", "usd": 2.49, "count": 1}, {"gpu": "NVIDIA L4", "usd": 0.44, "count": 2},
                   {"gpu": "Quantum Q1", "usd": 9.0, "count": 1}]}  # fmt: skip


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The three files, in a temporary copy of the tree's extension points."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "toy_prices.py").write_text(MODULE)
    fixtures = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, fixtures)
    folder = fixtures / "toyco" / "toy-prices"
    folder.mkdir(parents=True)
    (folder / "prices.json").write_text(json.dumps(BODY))
    (folder / "NOTES.md").write_text("prices.json mirrors GET https://api.toy.example/v1/prices (written for this test).\n")
    entry = {"method": "GET", "url": "https://api.toy.example/v1/prices", "body": "prices.json", "status": 200,
             "headers": {"content-type": "application/json"}, "fetched_at": "2026-11-20T06:00:00+00:00"}  # fmt: skip
    (folder / "manifest.jsonl").write_text(json.dumps(entry) + "\n")
    tests = tmp_path / "tests"
    (tests / "scrapers").mkdir(parents=True)
    (tests / "scrapers" / "test_toy_prices.py").write_text("def test_parse():\n    pass\n")

    monkeypatch.setattr(scrapers, "__path__", [*scrapers.__path__, str(plugins)])
    scrapers.all_sources.cache_clear()
    yield fixtures, tests
    scrapers.all_sources.cache_clear()
    sys.modules.pop("gpucat.scrapers.toy_prices", None)


def test_a_new_source_needs_its_three_files_and_nothing_else(toy, tmp_path):
    from fixtures.make_manifest import write_manifests

    fixtures, tests = toy
    source = scrapers.get_source("toy-prices")  # the registry found it
    assert scrapers.select_sources(["toyco"]) == [source]
    write_manifests([source], fixtures)  # the contributor's one command: hashes into its own manifest

    # Drift checks: fixtures, notes, fresh manifest, parser test, schema-valid rows, GPU targets.
    assert source_problems(source, fixtures, tests) == []

    # Replay: a whole refresh of every source, the new one included, from the fixture copy.
    path = tmp_path / "gpucat.duckdb"
    con = db.connect(path)
    with tempfile.TemporaryDirectory() as work:
        runs = pipeline.refresh_sources(con, list(scrapers.all_sources().values()), pipeline.FetchOptions(workdir=Path(work), replay_dir=fixtures))
    assert {r.source: r.status for r in runs}["toy-prices"] == "ok"
    assert con.execute("SELECT offer_id, gpu_model, usd_per_hour FROM current_offers WHERE provider = 'toyco' ORDER BY 1").fetchall() == [
        ("NVIDIA H100 80GB HBM3/1x", "H100-SXM", 2.49),
        ("NVIDIA L4/2x", "L4", 0.88),
    ]

    # Status lists it, with its unknown GPU.
    row = {r["source"]: r for r in catalog.status(con)}["toy-prices"]
    con.close()
    assert (row["status"], row["rows_valid"], row["rows_rejected"], row["unknown_gpus"]) == ("ok", 2, 1, ["Quantum Q1"])

    # `gpucat parse` takes it by name, URL and fetch time from its manifest.
    result = CliRunner().invoke(app, ["parse", "toy-prices", str(fixtures / "toyco" / "toy-prices" / "prices.json")])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["table"] for line in lines] == ["offers", "offers", "rejected_rows"]
    assert lines[0]["source_url"] == "https://api.toy.example/v1/prices"


def test_the_drift_checks_see_a_missing_piece(toy):
    fixtures, tests = toy
    source = scrapers.get_source("toy-prices")
    assert any("make_manifest" in p for p in source_problems(source, fixtures, tests))  # hashes never written

    from fixtures.make_manifest import write_manifests

    write_manifests([source], fixtures)
    (tests / "scrapers" / "test_toy_prices.py").unlink()
    (fixtures / "toyco" / "toy-prices" / "NOTES.md").unlink()
    problems = source_problems(source, fixtures, tests)
    assert any("NOTES.md" in p for p in problems)
    assert any("no parser test" in p for p in problems)


def test_the_recipe_module_leaves_the_frame_its_work():
    """The module the recipe writes passes the frame's rules (no provenance, paging or record errors by hand)."""
    from tests.scrapers.test_frame_rules import violations

    assert violations(MODULE) == []
