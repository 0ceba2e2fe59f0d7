"""The refresh flow end to end, replayed from fixtures: what loads, what stays, what is recorded."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import scrapers
from flows.refresh import refresh
from scrapers.capture import rehash
from tests.conftest import FIXTURES
from warehouse import db

SOURCES = ["aws-pricelist", "aws-spot", "aws-spot-advisor", "azure-retail", "runpod-graphql"]


def run_refresh(db_path: Path, replay: Path | None = FIXTURES, providers: list[str] | None = None):
    state = refresh(providers=providers, replay_dir=str(replay) if replay else None, db_path=str(db_path), return_state=True)
    return state, state.result(raise_on_failure=False)


def table(db_path: Path, sql: str) -> list[tuple]:
    with db.connect(db_path, read_only=True) as con:
        return con.execute(sql).fetchall()


ALL_OFFERS = "SELECT * FROM current_offers ORDER BY provider, offer_id"


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """One replay of the fixtures, then a second identical one."""
    path = tmp_path_factory.mktemp("replay") / "gpucat.duckdb"
    first_state, _ = run_refresh(path)
    first = table(path, ALL_OFFERS)
    second_state, summary = run_refresh(path)
    return path, first_state, second_state, summary, first


def test_replay_loads_every_source(replayed):
    path, first_state, _, summary, _ = replayed
    assert first_state.is_completed(), first_state.message
    assert sorted(row["source"] for row in summary) == SOURCES
    assert all(row["status"] == "ok" for row in summary)
    runs = table(path, "SELECT source, count(*), min(status), max(status) FROM scrape_runs GROUP BY source ORDER BY source")
    assert runs == [(s, 2, "ok", "ok") for s in SOURCES]


def test_replay_fills_current_offers_from_three_providers(replayed):
    path = replayed[0]
    providers = table(path, "SELECT provider, count(*) FROM current_offers GROUP BY provider ORDER BY provider")
    assert [p for p, n in providers] == ["aws", "azure", "runpod"]
    assert all(n > 5 for _, n in providers)
    bad = table(
        path,
        "SELECT offer_id FROM current_offers o LEFT JOIN gpu_models g USING (gpu_model) "
        "WHERE g.gpu_model IS NULL OR o.usd_per_hour <= 0 OR o.usd_per_gpu_hour <= 0 OR o.source_url IS NULL OR o.scraped_at IS NULL",
    )
    assert bad == []
    assert table(path, "SELECT count(*) FROM interruption_rates")[0][0] > 0


def test_second_identical_replay_changes_nothing(replayed):
    path, _, second_state, _, first = replayed
    assert second_state.is_completed()
    assert table(path, ALL_OFFERS) == first
    assert table(path, "SELECT count(*) FROM offer_versions WHERE valid_to IS NOT NULL") == [(0,)]


def broken_capture(tmp_path: Path, how: str) -> tuple[Path, str, str]:
    """A copy of the fixtures where one source is broken; returns (dir, source, expected error)."""
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES, capture)
    manifest = capture / "manifest.jsonl"
    entries = [json.loads(line) for line in manifest.read_text().splitlines()]
    if how == "http-500":
        for entry in entries:
            if entry["source"] == "runpod-graphql":
                entry["status"] = 500
        manifest.write_text("".join(json.dumps(e) + "\n" for e in entries))
        return capture, "runpod-graphql", "HTTP 500"
    if how == "truncated-body":
        body = capture / "aws/aws-spot/spot.json"
        body.write_bytes(body.read_bytes()[: body.stat().st_size // 2])
        rehash(capture)
        return capture, "aws-spot", "not valid JSON"
    if how == "renamed-fields":
        body = capture / "azure/azure-retail/page-1.json"
        body.write_text(body.read_text().replace('"Items"', '"items"'))
        rehash(capture)
        return capture, "azure-retail", "lacks Items"
    raise ValueError(how)


@pytest.mark.parametrize("how", ["http-500", "truncated-body", "renamed-fields"])
def test_a_failing_source_keeps_its_data_and_the_others_load(tmp_path, monkeypatch, how):
    monkeypatch.setenv("GPUCAT_HTTP_MAX_ATTEMPTS", "3")
    monkeypatch.setenv("GPUCAT_HTTP_BACKOFF_BASE_S", "0.01")
    path = tmp_path / "gpucat.duckdb"
    run_refresh(path)
    capture, broken, expected = broken_capture(tmp_path, how)
    kept = f"SELECT * FROM current_offers WHERE source = '{broken}' ORDER BY offer_id"
    before = table(path, kept)

    state, summary = run_refresh(path, replay=capture)

    assert state.is_failed()
    assert broken in state.message
    outcome = {row["source"]: row["status"] for row in summary}
    assert outcome == {s: ("failed" if s == broken else "ok") for s in SOURCES}
    assert table(path, kept) == before
    [(status, error)] = table(path, f"SELECT status, error FROM scrape_runs WHERE source = '{broken}' ORDER BY finished_at DESC LIMIT 1")
    assert status == "failed"
    assert expected in error


def test_missing_required_key_skips_the_source(tmp_path, monkeypatch):
    keyed = replace(scrapers.get_source("runpod-graphql"), api_key_required=True)
    monkeypatch.setitem(scrapers.all_sources(), "runpod-graphql", keyed)
    path = tmp_path / "gpucat.duckdb"
    state, summary = run_refresh(path, replay=None, providers=["runpod"])
    assert state.is_completed()
    assert summary[0]["status"] == "skipped"
    assert table(path, "SELECT status, error FROM scrape_runs") == [("skipped", "missing API key: RUNPOD_API_KEY is not set")]


def test_cli_refresh_reports_json_and_exits_1_when_a_source_fails(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from gpucat.cli import app

    monkeypatch.setenv("GPUCAT_HTTP_MAX_ATTEMPTS", "1")
    capture, broken, expected = broken_capture(tmp_path, "http-500")
    result = CliRunner().invoke(app, ["refresh", "--replay", str(capture), "--db", str(tmp_path / "g.duckdb"), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["state"] == "FAILED"
    statuses = {row["source"]: (row["status"], row["error"] or "") for row in report["sources"]}
    assert statuses[broken][0] == "failed" and expected in statuses[broken][1]
    assert all(status == "ok" for name, (status, _) in statuses.items() if name != broken)
