"""Every runner wraps the one orchestrator, so every runner refreshes the same way (issue 22).

The same replays go through `gpucat.pipeline.refresh_catalog` in this process, through the
Prefect flow (its steps as tasks, on Prefect's ephemeral API), and through the flow on a local
Dask cluster of two worker processes (each preparation pickled across a process boundary).
Each lands in a new warehouse, and the three must hold the same `current_offers` and the same
`scrape_runs`, less what names a run or a moment (ids, the clock, the process). The replays:

- one provider alone whose prices are in euros (OVH): the exchange rates are its prerequisite,
  which every runner must fetch first on a new warehouse, or every EUR price is rejected;
- a mix: a primary whose capture is broken beside its fallback (which must take over), and a
  few other sources (their prices converted with the rates the same refresh loaded first).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpucat import pipeline
from gpucat.scrapers import all_sources, select_sources
from gpucat.warehouse import db
from tests.conftest import FIXTURES
from tests.flows.test_refresh import broken_capture

# Every column but the clock's (age_hours and is_stale move with the time of the read).
ALL_OFFERS = "SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers ORDER BY ALL"
# Every column but those naming a run, a moment or a process.
RUNS = "SELECT * EXCLUDE (run_id, flow_run_id, started_at, finished_at, runner) FROM scrape_runs ORDER BY ALL"

RATES = sorted(s.name for s in all_sources().values() if s.loads_first)
PAIR = next(s for s in sorted(all_sources().values(), key=lambda s: s.name) if s.fallback_for)  # a fallback...
PRIMARY = PAIR.fallback_for  # ...and the primary it stands in for
BROKEN = PRIMARY
_ALONE = sorted(s.name for s in all_sources().values() if not s.loads_first and not s.fallback_for and s.name != PRIMARY)
_SHARED = {s.provider for s in all_sources().values() if sum(t.provider == s.provider for t in all_sources().values()) > 1}
MIX = sorted([PRIMARY, PAIR.name, *[n for n in _ALONE if n not in _SHARED][2::6]])
CASES = {"ovh": ["ovh"], "mix": MIX}


def table(path: Path, sql: str) -> list[tuple]:
    with db.connect(path, read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> dict[str, Path]:
    return {"ovh": FIXTURES, "mix": broken_capture(tmp_path_factory.mktemp("mix"), BROKEN, "login-page")}


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("prefect_dask")
    from distributed import LocalCluster

    from gpucat.flows.runners import local_cluster_kwargs

    with LocalCluster(**local_cluster_kwargs(2, processes=True)) as cluster:
        yield cluster


def in_process(path: Path, names: list[str], capture: Path, _cluster) -> list[dict]:
    runs = pipeline.refresh_catalog(path, select_sources(names), replay_dir=capture)
    return [pipeline.summary_row(run) for run in runs]


def prefect_flow(path: Path, names: list[str], capture: Path, _cluster) -> list[dict]:
    from gpucat.flows.refresh import refresh

    state = refresh(providers=names, replay_dir=str(capture), db_path=str(path), return_state=True)
    return state.result(raise_on_failure=False)


def dask(path: Path, names: list[str], capture: Path, cluster) -> list[dict]:
    from gpucat.flows.runners import dask_task_runner, run_refresh

    state = run_refresh(dask_task_runner(cluster.scheduler_address), providers=names, replay_dir=str(capture), db_path=str(path))
    return state.result(raise_on_failure=False)


RUNNERS = {"in-process": in_process, "prefect": prefect_flow, "dask": dask}


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory, captures, request) -> dict[tuple[str, str], tuple[Path, list[dict]]]:
    out = {}
    for case, names in CASES.items():
        for runner, run in RUNNERS.items():
            cluster = request.getfixturevalue("cluster") if runner == "dask" else None
            path = tmp_path_factory.mktemp(f"{case}-{runner}") / "gpucat.duckdb"
            out[case, runner] = path, run(path, names, captures[case], cluster)
    return out


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("runner", ["prefect", "dask"])
def test_every_runner_loads_what_the_in_process_refresh_loads(refreshed, case, runner):
    path, summary = refreshed[case, runner]
    reference, expected = refreshed[case, "in-process"]
    assert table(path, ALL_OFFERS) == table(reference, ALL_OFFERS)
    assert table(path, RUNS) == table(reference, RUNS)
    assert [(r["source"], r["status"], r["error"]) for r in summary] == [(r["source"], r["status"], r["error"]) for r in expected]


def test_a_euro_provider_alone_on_a_new_warehouse_loads_with_the_rates_first(refreshed):
    path, summary = refreshed["ovh", "in-process"]
    ovh = [s.name for s in select_sources(["ovh"])]
    assert {r["source"]: r["status"] for r in summary} == {n: "ok" for n in RATES + ovh}
    offers = table(path, "SELECT currency, count(*), count(usd_per_hour) FROM current_offers WHERE provider = 'ovh' GROUP BY ALL")
    assert len(offers) == 1 and offers[0][0] == "EUR" and offers[0][1] == offers[0][2] > 0, offers
    reasons = table(path, "SELECT DISTINCT unnest(reasons) FROM rejected_rows WHERE provider = 'ovh'")
    assert not [r for (r,) in reasons if "exchange_rate" in r], reasons


def test_the_mix_fails_its_broken_primary_runs_its_fallback_and_skips_the_others_fallback(refreshed):
    path, summary = refreshed["mix", "in-process"]
    status = {r["source"]: r["status"] for r in summary}
    assert status == {**{n: "ok" for n in RATES + MIX}, BROKEN: "failed"}
    assert table(path, f"SELECT DISTINCT source FROM current_offers WHERE provider = '{PAIR.provider}'") == [(PAIR.name,)]


def test_cli_refresh_of_one_euro_provider_on_a_new_warehouse_loads_its_offers(tmp_path, catalog_db):
    """`gpucat refresh --replay fixtures -p ovh` on a new database: the offers a whole refresh loads."""
    from typer.testing import CliRunner

    from gpucat.cli import app

    path = tmp_path / "new.duckdb"
    result = CliRunner().invoke(app, ["refresh", "--replay", str(FIXTURES), "-p", "ovh", "--db", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert {r["source"]: r["status"] for r in json.loads(result.stdout)["sources"]}.keys() >= set(RATES)
    ovh = "SELECT * EXCLUDE (age_hours, is_stale, price_since) FROM current_offers WHERE provider = 'ovh' ORDER BY ALL"
    assert table(path, ovh) == table(catalog_db, ovh) != []
