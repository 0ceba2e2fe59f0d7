"""The quick-start journey on a fresh clone, a year after the bundled captures were made.

`gpucat refresh --replay fixtures` loads the bundled captures; every read command then runs with
the clock set one year after the newest capture (`GPUCAT_NOW`, the clock read commands use).
A replay is judged as of its capture, so fit, cost and report still answer with ranked offers,
and each says that its data is a replay and how old it is. Live data keeps its budgets.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.scrapers import all_sources
from gpucat.scrapers.capture import read_manifest
from gpucat.warehouse import db
from tests.conftest import FIXTURES, ROOT

runner = CliRunner()
REPLAY = re.compile(r"replayed data (\d+)(?:-(\d+))? days old, captured \d{4}-\d\d-\d\d(\.\.\d{4}-\d\d-\d\d)? \([^)]*fixtures\)")


def newest_capture() -> datetime:
    return max(e.fetched_at for manifest in FIXTURES.glob("*/*/manifest.jsonl") for e in read_manifest(manifest.parent))


YEAR_ON = newest_capture() + timedelta(days=365)
ENV = {"GPUCAT_NOW": YEAR_ON.isoformat(), "COLUMNS": "200"}


def gpucat(*args: str, env: dict[str, str] | None = None, ok: bool = True):
    result = runner.invoke(app, list(args), env={**ENV, **(env or {})})
    assert (result.exit_code == 0) == ok, result.output
    return result


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("first-run") / "gpucat.duckdb"
    gpucat("refresh", "--replay", str(FIXTURES), "--db", str(path), "--json")
    return path


def con_rows(path: Path, sql: str) -> list[tuple]:
    with db.connect(path, read_only=True) as con:
        return con.execute(sql).fetchall()


def says_replay(text: str) -> None:
    match = REPLAY.search(text)
    assert match, text[:2000]
    assert int(match[1]) >= 365  # a year after the newest capture


def test_scrape_runs_record_the_replay_and_its_capture(replayed):
    with db.connect(replayed, read_only=True) as con:
        rows = con.execute("SELECT DISTINCT capture, status FROM scrape_runs").fetchall()
        captured = dict(con.execute("SELECT source, captured_at FROM scrape_runs").fetchall())
    # A fallback whose primary loaded is skipped (one truth per provider): it read nothing.
    assert sorted(rows) == [(str(FIXTURES), "ok"), (str(FIXTURES), "skipped")]
    skipped = {s for s, status in con_rows(replayed, "SELECT source, status FROM scrape_runs") if status == "skipped"}
    assert skipped == {name for name, source in all_sources().items() if source.fallback_for}
    manifests = {m.parent.name: max(e.fetched_at for e in read_manifest(m.parent)) for m in FIXTURES.glob("*/*/manifest.jsonl")}
    assert {s: t for s, t in captured.items() if s not in skipped} == {s: t for s, t in manifests.items() if s not in skipped}
    # each run's capture time is its newest response's fetch time


def test_fit_lists_fitting_offers_and_says_the_data_is_a_replay(replayed):
    out = json.loads(gpucat("fit", "--model", "llama-3.1-70b", "--method", "qlora", "--json", "--db", str(replayed)).stdout)
    assert len(out["offers"]) >= 10 and out["stale_sources"] == []
    assert out["data"]["replayed"] is True and out["data"]["age_hours_min"] >= 365 * 24
    assert out["data"]["captured_to"].startswith("2026-11-30")
    table = gpucat("fit", "--model", "llama-3.1-70b", "--method", "qlora", "--db", str(replayed))
    says_replay(table.stdout)
    assert "No current offer fits" not in table.stdout


def test_cost_returns_ranked_rows_each_with_its_data_age(replayed):
    result = gpucat("cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M", "--both", "--json",
                    "--db", str(replayed))  # fmt: skip
    rows = json.loads(result.stdout)
    assert len(rows) >= 10
    assert [r["total_usd"] for r in rows] == sorted(r["total_usd"] for r in rows)
    assert all(r["replayed"] is True and r["data_age_hours"] >= 365 * 24 for r in rows)
    says_replay(result.stderr)


def readme_explain_example() -> list[str]:
    line = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("gpucat cost") and "--explain" in line)
    return shlex.split(line)[1:]


def test_the_readme_explain_example_works(replayed):
    result = gpucat(*readme_explain_example(), "--db", str(replayed))
    says_replay(result.stdout)
    assert "aws p4d.24xlarge/us-east-2/spot: 8 x A100-SXM4-40GB" in result.stdout
    total = [line for line in result.stdout.splitlines() if line.startswith("total: ")]
    assert len(total) == 1


def test_report_with_a_job_draws_its_fit_and_cost_charts(replayed, tmp_path):
    out = tmp_path / "report.html"
    result = gpucat("report", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "200M", "--out", str(out),
                    "--db", str(replayed), "--json")  # fmt: skip
    summary = json.loads(result.stdout)
    assert summary["fit_rows"] >= 10 and summary["cost_rows"] >= 10 and summary["data"]["replayed"] is True
    page = out.read_text()
    assert 'id="chart-fit"' in page and 'id="chart-cost"' in page and "No current offer fits" not in page
    banner = re.search(r'<p class="banner" id="replay"><strong>(.*?)</strong>', page)
    assert banner and REPLAY.search(banner[1].replace("Replayed", "replayed"))


def test_status_shows_the_data_age_not_the_run_age(replayed):
    rows = json.loads(gpucat("status", "--json", "--db", str(replayed)).stdout)
    loaded = [r for r in rows if r["status"] == "ok"]
    assert loaded and all(r["capture"] == str(FIXTURES) and not r["stale"] for r in loaded)
    assert all(r["data_age_s"] >= 365 * 86400 for r in loaded)
    assert all(r["data_age_s"] > r["age_s"] + 86400 for r in loaded)  # the data is days older than the run that replayed it
    table = gpucat("status", "--db", str(replayed)).stdout
    says_replay(table)
    assert re.search(r"aws-pricelist\s+ok\s+3\d\dd\s+replay 2026-11-20", table)


def test_offers_say_the_age_and_where_they_stop(replayed):
    table = gpucat("offers", "--gpu", "H100", "--on-demand", "--db", str(replayed))
    says_replay(table.stdout)
    stopped = re.search(r"showing 50 of (\d+) offers; --limit N or --all shows more", table.stderr)
    assert stopped and int(stopped[1]) > 50
    everything = json.loads(gpucat("offers", "--gpu", "H100", "--on-demand", "--all", "--json", "--db", str(replayed)).stdout)
    assert len(everything) == int(stopped[1]) and all(r["replayed"] and r["age_hours"] >= 365 * 24 for r in everything)
    ages = gpucat("offers", "--columns", "provider,age_hours", "-n", "3", "--db", str(replayed)).stdout
    assert re.search(r"age h\n", ages) and re.search(r"runpod\s+(8,7\d\d|9,\d\d\d)", ages)


def test_runpod_community_and_secure_rows_differ_by_their_tier(replayed):
    rows = gpucat("offers", "--provider", "runpod", "--gpu", "RTX4090", "--on-demand", "--all", "--db", str(replayed)).stdout
    assert re.search(r"runpod\s+RTX-4090\s+1\s+.*\bcommunity\b", rows) and re.search(r"runpod\s+RTX-4090\s+1\s+.*\bsecure\b", rows)


def test_offers_as_csv(replayed):
    text = gpucat("offers", "--gpu", "H100:8", "--format", "csv", "--db", str(replayed)).stdout
    header, *lines = text.splitlines()
    assert header.split(",")[:3] == ["provider", "instance_type", "region"] and lines
    assert all(",H100-" in line for line in lines)


@pytest.fixture
def live(replayed, tmp_path) -> Path:
    """The same catalog as if its runs had been live: the captures are days old, past every budget."""
    path = tmp_path / "live.duckdb"
    shutil.copy(replayed, path)
    with db.connect(path) as con:
        con.execute("UPDATE scrape_runs SET capture = NULL, captured_at = NULL")
    return path


def test_live_data_keeps_its_budgets_and_an_empty_answer_names_the_filter(live):
    fit = gpucat("fit", "--model", "llama-3.1-70b", "--method", "qlora", "--db", str(live))
    assert "No current offer fits: leaving out stale offers (--include-stale keeps them) left none of the" in fit.stdout
    assert "qlora" not in fit.stdout.split("No current offer fits", 1)[1]  # never advice already taken
    assert "left out stale offers from" in fit.stderr and "replayed data" not in fit.stdout + fit.stderr
    kept = json.loads(gpucat("fit", "--model", "llama-3.1-70b", "--method", "qlora", "--include-stale", "--json", "--db", str(live)).stdout)
    assert kept["offers"] and kept["data"] is None
    offers = gpucat("offers", "--db", str(live))
    assert "No current offer matches: leaving out stale offers (--include-stale keeps them) left none" in offers.stdout
    assert json.loads(gpucat("offers", "--include-stale", "--json", "-n", "5", "--db", str(live)).stdout)
    report = json.loads(gpucat("report", "--out", str(live.with_suffix(".html")), "--json", "--db", str(live)).stdout)
    assert report["offers"] == 0
    assert json.loads(gpucat("report", "--out", str(live.with_suffix(".html")), "--json", "--include-stale", "--db", str(live)).stdout)["offers"] > 100


def test_advice_never_suggests_what_was_asked_for(live):
    # Nothing fits one GPU without sharding; the advice names what was not tried, never qlora when asked for.
    for method, says_qlora in (("qlora", False), ("lora", True)):
        out = gpucat("fit", "--model", "llama-3.1-405b", "--method", method, "--sharding", "none", "--headroom", "0.9",
                     "--include-stale", "--db", str(live)).stdout  # fmt: skip
        advice = out.split("No current offer fits.", 1)[1]
        assert ("--method qlora" in advice) is says_qlora and "sharding (--sharding fsdp)" in advice
