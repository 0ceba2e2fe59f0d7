"""Freshness: budgets from the schedules file, age and staleness on current offers, and who leaves stale offers out."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

import pytest
from typer.testing import CliRunner

from gpucat import pipeline
from gpucat.cli import app
from gpucat.freshness import FRESH_OFFERS, left_out_note, source_freshness, stale_sources
from gpucat.schedules import freshness_budgets, load_groups
from gpucat.schemas.validate import validate
from gpucat.warehouse import db
from tests.factories import SCRAPED, example_source, offers

VERSIONING = {"content_hash", "valid_from", "valid_to", "first_run_id", "last_run_id"}


@pytest.fixture
def con(tmp_path):
    connection = db.connect(tmp_path / "test.duckdb")
    pipeline.load_reference(connection)
    connection.execute("DELETE FROM source_schedules")  # only the made-up source has a budget here
    connection.execute("INSERT INTO source_schedules VALUES ('example-offers', 'test', '0 * * * *', 2)")
    run = pipeline.new_run(example_source())
    pipeline.load_batches(connection, run, pipeline.SourceBatch([validate("offers", offers(2))], pages=1))
    yield connection
    connection.close()


def at(con, hours: float) -> None:
    con.execute("SET VARIABLE gpucat_now = CAST($now AS TIMESTAMPTZ)", {"now": SCRAPED + timedelta(hours=hours)})


def test_current_offers_keeps_every_offer_column_and_adds_freshness(con):
    offer_columns = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'offer_versions' ORDER BY ordinal_position").fetchall()]
    view_columns = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'current_offers' ORDER BY ordinal_position").fetchall()]
    assert view_columns == [c for c in offer_columns if c not in VERSIONING] + ["price_since", "age_hours", "is_stale", "replayed"]
    assert "fx_rate_date" in view_columns


@pytest.mark.parametrize(("hours", "stale"), [(0, False), (1.5, False), (2, False), (2.5, True), (100, True)])
def test_age_and_staleness_against_the_budget(con, hours: float, stale: bool):
    at(con, hours)
    assert con.execute("SELECT DISTINCT age_hours, is_stale FROM current_offers").fetchall() == [(hours, stale)]
    kept = con.execute(f"SELECT count(*) FROM current_offers WHERE {FRESH_OFFERS}", {"include_stale": False}).fetchone()
    assert kept == (0 if stale else 2,)
    assert con.execute(f"SELECT count(*) FROM current_offers WHERE {FRESH_OFFERS}", {"include_stale": True}).fetchone() == (2,)


def test_a_source_without_a_budget_is_never_stale(con):
    con.execute("DELETE FROM source_schedules")
    at(con, 10_000)
    assert con.execute("SELECT DISTINCT is_stale FROM current_offers").fetchall() == [(False,)]


def test_stale_sources_and_the_note(con):
    assert stale_sources(con, now=SCRAPED + timedelta(hours=1)) == []
    stale = stale_sources(con, now=SCRAPED + timedelta(hours=26))
    assert stale == [{"source": "example-offers", "age_hours": 26.0, "stale_after_hours": 2.0, "offers": 2}]
    assert left_out_note(stale, include_stale=False) == "left out stale offers from example-offers (26 h old, budget 2 h); --include-stale keeps them"
    assert left_out_note(stale, include_stale=True) == "includes stale offers from example-offers (26 h old, budget 2 h)"
    assert left_out_note([], include_stale=False) is None


@pytest.mark.parametrize(("hours", "stale"), [(1, False), (3, True)])
def test_source_freshness_follows_the_last_good_run_and_the_offers(con, hours: float, stale: bool):
    con.execute("INSERT INTO source_schedules VALUES ('example-rates', 'test', '0 0 * * *', 2), ('never-run', 'test', '0 0 * * *', 2)")
    con.execute(
        "INSERT INTO scrape_runs (run_id, source, provider, started_at, finished_at, status) "
        "VALUES ('r1', 'example-rates', 'example', $at, $at, 'ok'), ('r2', 'example-rates', 'example', $later, $later, 'failed')",
        {"at": SCRAPED, "later": SCRAPED + timedelta(minutes=90)},
    )
    at(con, hours)
    assert source_freshness(con) == {
        "example-offers": {"stale_after_hours": 2.0, "stale": stale},  # by its offers' age
        "example-rates": {"stale_after_hours": 2.0, "stale": stale},  # by its last good run (a failed one does not count)
        "never-run": {"stale_after_hours": 2.0, "stale": True},
    }


def test_refresh_writes_every_budget_from_the_schedules_file(tmp_path):
    with db.connect(tmp_path / "t.duckdb") as con:
        pipeline.load_reference(con)
        rows = dict(con.execute("SELECT source, stale_after_hours FROM source_schedules").fetchall())
    assert rows == freshness_budgets(load_groups())


@pytest.fixture
def stale_catalog(catalog_db, tmp_path):
    """The fixture catalog with its real budgets, as if its runs had been live: the bundled
    captures are days old, so all stale (a replay is judged as of its capture: see below)."""
    path = tmp_path / "stale.duckdb"
    shutil.copy(catalog_db, path)
    with db.connect(path) as con:
        pipeline.load_reference(con)
        con.execute("UPDATE scrape_runs SET capture = NULL, captured_at = NULL")
    return path


def test_fit_leaves_stale_sources_out_and_says_so(stale_catalog):
    base = ["fit", "--model", "llama-3.1-8b", "--method", "qlora", "--db", str(stale_catalog)]
    runner = CliRunner()
    left_out = runner.invoke(app, [*base, "--json"])
    kept = runner.invoke(app, [*base, "--json", "--include-stale"])
    assert left_out.exit_code == 0 and kept.exit_code == 0, left_out.output + kept.output
    out, everything = json.loads(left_out.stdout), json.loads(kept.stdout)
    assert out["offers"] == [] and everything["offers"]
    assert {s["source"] for s in out["stale_sources"]} == {s["source"] for s in everything["stale_sources"]} != set()
    table = runner.invoke(app, base)
    assert "left out stale offers from " in table.stderr and "--include-stale keeps them" in table.stderr
    assert "Try" not in table.stdout or "qlora" not in table.stdout.split("Try", 1)[1]  # never advice already taken


def test_cost_leaves_stale_sources_out_and_says_so(stale_catalog):
    base = ["cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "20M", "--db", str(stale_catalog)]
    runner = CliRunner()
    left_out = runner.invoke(app, [*base, "--json"])
    kept = runner.invoke(app, [*base, "--json", "--include-stale"])
    assert left_out.exit_code == 0 and kept.exit_code == 0, left_out.output + kept.output
    assert json.loads(left_out.stdout) == [] and json.loads(kept.stdout)
    assert "left out stale offers from " in left_out.stderr and "left out stale" not in kept.stderr
    table = runner.invoke(app, base)
    assert "left out stale offers from " in table.stderr
    assert "leaving out stale sources (--include-stale keeps them) left none of the" in table.stdout


def test_status_names_stale_sources(stale_catalog):
    result = CliRunner().invoke(app, ["status", "--db", str(stale_catalog), "--json"])
    rows = json.loads(result.stdout)
    assert {r["source"]: r["stale"] for r in rows} == {s: True for s in freshness_budgets(load_groups())}
    table = CliRunner().invoke(app, ["status", "--db", str(stale_catalog)])
    assert "stale sources, no good run within their freshness budget: " in table.stdout
