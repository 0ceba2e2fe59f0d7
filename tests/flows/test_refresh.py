"""The refresh end to end, replayed from fixtures: what loads, what stays, what is recorded.

One Prefect flow run (and a second identical one) proves the flow's wiring; the per-source
failure isolation runs the same steps in-process for every registered source, so a new source
is covered without naming it here.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from gpucat import pipeline, scrapers
from gpucat.flows.refresh import refresh
from gpucat.schemas.settings import Settings
from gpucat.scrapers import all_sources
from gpucat.scrapers.capture import MANIFEST, rehash
from gpucat.warehouse import db
from tests.conftest import FIXTURES

SOURCES = sorted(all_sources())
# Sources with a sibling (a primary and its fallback) share one truth: when one fails the other
# takes over and retires its rows (tests/warehouse/test_one_truth.py), and a fallback is skipped
# while its primary loads. The isolation tests below are about sources that stand alone.
PAIRED = {name for name in SOURCES if scrapers.siblings(name)}
SKIPPED_FALLBACKS = {s.name for s in all_sources().values() if s.fallback_for}
OFFER_PROVIDERS = sorted({s.provider for s in all_sources().values() if "offers" in s.tables})


def run_refresh(db_path: Path, replay: Path | None = FIXTURES, providers: list[str] | None = None):
    state = refresh(providers=providers, replay_dir=str(replay) if replay else None, db_path=str(db_path), return_state=True)
    return state, state.result(raise_on_failure=False)


def table(db_path: Path, sql: str, params: dict | None = None) -> list[tuple]:
    with db.connect(db_path, read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


# Every column but the clock's (age_hours, is_stale move with the time of the read) and scraped_at,
# which an unchanged source's check moves (its rows are seen again at the check).
UNMOVED_OFFERS = "SELECT * EXCLUDE (age_hours, is_stale, scraped_at) FROM current_offers ORDER BY provider, offer_id"
# What an offer says, without the columns a refresh's clock moves (scraped_at on an unchanged source).
OFFER_CONTENT = "SELECT provider, offer_id, gpu_model, gpu_count, usd_per_hour, availability FROM current_offers ORDER BY ALL"


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """One replay of the fixtures through the Prefect flow, then a second identical one."""
    path = tmp_path_factory.mktemp("replay") / "gpucat.duckdb"
    first_state, _ = run_refresh(path)
    first = table(path, UNMOVED_OFFERS)
    second_state, summary = run_refresh(path)
    return path, first_state, second_state, summary, first


def test_replay_loads_every_source(replayed):
    path, first_state, _, summary, _ = replayed
    assert first_state.is_completed(), first_state.message
    assert sorted(row["source"] for row in summary) == SOURCES
    # A fallback is skipped while its primary loads: one truth per provider (lambda-page stands in for the API).
    fallbacks = {s.name for s in all_sources().values() if s.fallback_for}
    # The second replay fetches conditionally, as every refresh does: a source whose capture proves
    # nothing changed (a 304, the same provider version) is `unchanged`, its rows still current.
    assert fallbacks and all(row["status"] in (("skipped",) if row["source"] in fallbacks else ("ok", "unchanged")) for row in summary)
    runs = table(path, "SELECT source, list(status ORDER BY started_at) FROM scrape_runs GROUP BY source ORDER BY source")
    assert [(s, first) for s, (first, _) in runs] == [(s, "skipped" if s in fallbacks else "ok") for s in SOURCES]
    assert [(s, second) for s, (_, second) in runs] == [(row["source"], row["status"]) for row in sorted(summary, key=lambda r: r["source"])]


def test_replay_fills_current_offers_from_every_offer_provider(replayed):
    path = replayed[0]
    providers = table(path, "SELECT provider, count(*) FROM current_offers GROUP BY provider ORDER BY provider")
    assert [p for p, _ in providers] == OFFER_PROVIDERS
    assert all(n > 0 for _, n in providers)
    bad = table(
        path,
        "SELECT offer_id FROM current_offers o LEFT JOIN gpu_models g USING (gpu_model) "
        "WHERE g.gpu_model IS NULL OR o.usd_per_hour <= 0 OR o.usd_per_gpu_hour <= 0 OR o.source_url IS NULL OR o.scraped_at IS NULL",
    )
    assert bad == []


def test_second_identical_replay_changes_nothing(replayed):
    path, _, second_state, _, first = replayed
    assert second_state.is_completed()
    assert table(path, UNMOVED_OFFERS) == first
    assert table(path, "SELECT count(*) FROM offer_versions WHERE valid_to IS NOT NULL") == [(0,)]


def broken_capture(tmp_path: Path, source_name: str, how: str) -> Path:
    """A copy of the fixtures where one source is broken."""
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES, capture)
    source = all_sources()[source_name]
    manifest = capture / source.provider / source.name / MANIFEST
    entries = [json.loads(line) for line in manifest.read_text().splitlines()]
    if how == "http-500":
        entries = [{**e, "status": 500} for e in entries]
        manifest.write_text("".join(json.dumps(e) + "\n" for e in entries))
    elif how == "login-page":  # an HTML sign-in page where the payload should be
        for entry in entries:
            (manifest.parent / entry["body"]).write_text("<!DOCTYPE html><html><body><form>Sign in</form></body></html>")
        rehash(capture)
    else:
        raise ValueError(how)
    return capture


def refresh_in_process(db_path: Path, replay: Path, names: list[str]) -> dict[str, tuple[str, str | None]]:
    con = db.connect(db_path)
    try:
        with tempfile.TemporaryDirectory() as work:
            options = pipeline.FetchOptions(workdir=Path(work), replay_dir=replay, settings=Settings.from_env())  # the runner's edge
            runs = pipeline.refresh_sources(con, [all_sources()[n] for n in names], options)
    finally:
        con.close()
    return {run.source: (run.status, run.error) for run in runs}


@pytest.fixture(scope="module")
def loaded_catalog(tmp_path_factory) -> Path:
    from tests.conftest import load_fixture_catalog

    return load_fixture_catalog(tmp_path_factory.mktemp("loaded") / "gpucat.duckdb")


def current_rows(table_name: str) -> str:
    """A source's current rows of a table (offers without the clock's columns)."""
    relation = "current_offers" if table_name == "offers" else table_name
    exclude = " EXCLUDE (age_hours, is_stale)" if table_name == "offers" else ""
    return f"SELECT *{exclude} FROM {relation} WHERE source = $s ORDER BY ALL"


@pytest.mark.parametrize("how", ["http-500", "login-page"])
@pytest.mark.parametrize("broken", [s for s in SOURCES if s not in PAIRED])
def test_a_failing_source_keeps_its_data_and_the_others_load(tmp_path, monkeypatch, loaded_catalog, broken, how):
    monkeypatch.setenv("GPUCAT_HTTP_MAX_ATTEMPTS", "1")
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(loaded_catalog, path)
    source = all_sources()[broken]
    kept = {t: table(path, current_rows(t), {"s": broken}) for t in source.tables}

    # The broken source beside its neighbour in the registry (and the rate sources others need):
    # enough to show one failure stays contained, at a fraction of a whole refresh's time.
    alone = [s for s in SOURCES if s not in PAIRED]
    neighbour = alone[(alone.index(broken) + 1) % len(alone)]
    names = sorted({broken, neighbour, *(s for s in SOURCES if all_sources()[s].loads_first)})
    outcome = refresh_in_process(path, broken_capture(tmp_path, broken, how), names)

    # The others load again, or are `unchanged` where the provider's version proves it.
    assert {s: ("failed" if status == "failed" else "loaded") for s, (status, _) in outcome.items()} == {
        s: ("failed" if s == broken else "loaded") for s in names
    }
    assert {status for s, (status, _) in outcome.items() if s != broken} <= {"ok", "unchanged"}
    assert ("HTTP 500" if how == "http-500" else "Error") in outcome[broken][1]
    for name, rows in kept.items():
        assert rows, f"{broken} had no {name} rows to keep"
        assert table(path, current_rows(name), {"s": broken}) == rows


def test_missing_required_key_skips_the_source(tmp_path, monkeypatch):
    name = SOURCES[0]
    keyed = replace(scrapers.get_source(name), api_key_env="GPUCAT_TEST_ONLY_API_KEY", api_key_required=True)
    monkeypatch.setitem(scrapers.all_sources(), name, keyed)
    path = tmp_path / "gpucat.duckdb"
    pipeline.refresh_catalog(path, [scrapers.get_source("ecb-rates")], replay_dir=FIXTURES)  # rates: no prerequisite to fetch live
    state, summary = run_refresh(path, replay=None, providers=[name])
    assert state.is_completed()
    assert [(row["source"], row["status"]) for row in summary] == [(name, "skipped")]
    assert table(path, "SELECT status, error FROM scrape_runs WHERE source = $s", {"s": name}) == [("skipped", "missing API key: GPUCAT_TEST_ONLY_API_KEY is not set")]


def test_cli_refresh_reports_json_and_exits_1_when_a_source_fails(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from gpucat.cli import app

    monkeypatch.setenv("GPUCAT_HTTP_MAX_ATTEMPTS", "1")
    broken = SOURCES[-1]
    capture = broken_capture(tmp_path, broken, "http-500")
    result = CliRunner().invoke(app, ["refresh", "--replay", str(capture), "--db", str(tmp_path / "g.duckdb"), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["state"] == "FAILED"
    statuses = {row["source"]: (row["status"], row["error"] or "") for row in report["sources"]}
    assert statuses[broken][0] == "failed" and "HTTP 500" in statuses[broken][1]
    assert all(status == ("skipped" if name in SKIPPED_FALLBACKS else "ok") for name, (status, _) in statuses.items() if name != broken)


def test_half_the_sources_failing_at_once_leaves_the_other_half_loaded(tmp_path, monkeypatch, loaded_catalog):
    monkeypatch.setenv("GPUCAT_HTTP_MAX_ATTEMPTS", "1")
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(loaded_catalog, path)
    broken = [s for s in SOURCES[::2] if not all_sources()[s].loads_first and s not in PAIRED]
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES, capture)
    for name in broken:
        source = all_sources()[name]
        manifest = capture / source.provider / source.name / MANIFEST
        entries = [{**json.loads(line), "status": 500} for line in manifest.read_text().splitlines()]
        manifest.write_text("".join(json.dumps(e) + "\n" for e in entries))
    before = table(path, OFFER_CONTENT)

    outcome = refresh_in_process(path, capture, SOURCES)

    assert {s for s, (status, _) in outcome.items() if status == "failed"} == set(broken)
    assert {status for s, (status, _) in outcome.items() if s not in set(broken) | SKIPPED_FALLBACKS} <= {"ok", "unchanged"}
    assert table(path, OFFER_CONTENT) == before  # the same replay: nothing lost, nothing new


def test_the_flow_records_its_runs_running_and_marks_a_dead_refresh_interrupted(tmp_path, monkeypatch):
    """The flow does what the in-process refresh does: before a source fetches, its run is a
    `running` row naming the flow's process; a `running` row left by a dead process is marked
    `interrupted`; the outcome replaces the flow's own row."""
    import socket

    from gpucat.scrapers import get_source
    from gpucat.warehouse import runs

    name = "runpod-graphql"
    path = tmp_path / "gpucat.duckdb"
    dead = pipeline.new_run(get_source("aws-spot"))
    with db.connect(path) as con:
        runs.start_runs(con, [dead], runner=f"{socket.gethostname()}:999999999")  # no such process
    seen: list[tuple] = []
    fetch = pipeline.fetch_source

    def watching_fetch(source, options, previous=None):
        if source.name == name:
            seen.extend(table(path, "SELECT source, status, runner FROM scrape_runs ORDER BY source"))
        return fetch(source, options, previous)

    monkeypatch.setattr(pipeline, "fetch_source", watching_fetch)
    state, summary = run_refresh(path, providers=[name])
    assert state.is_completed()
    # On this new warehouse the rates come first (the prerequisite), loaded before the source fetches.
    dead = ("aws-spot", "interrupted", f"{socket.gethostname()}:999999999")
    assert seen == [dead, ("ecb-rates", "ok", None), (name, "running", runs.this_runner())]
    rows = table(path, "SELECT source, status, runner, error IS NOT NULL FROM scrape_runs ORDER BY source")
    assert rows == [(*dead, True), ("ecb-rates", "ok", None, False), (name, "ok", None, False)]
