"""The refresh flow on a local Dask cluster of worker processes.

One replayed refresh goes through `flows.runners` onto a `distributed.LocalCluster` (two
single-threaded worker processes, so every preparation's input and outcome is pickled across a
process boundary). One source's capture is broken, so a failure found on a worker is recorded
with its own message. That the cluster loads what the in-process refresh loads is
tests/flows/test_every_runner.py's to show.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

pytest.importorskip("prefect_dask")

from distributed import Client, LocalCluster  # noqa: E402
from prefect import Task  # noqa: E402

import gpucat.flows.refresh as refresh_module  # noqa: E402
from gpucat import pipeline  # noqa: E402
from gpucat.flows.runners import dask_task_runner, local_cluster_kwargs, run_refresh  # noqa: E402
from gpucat.scrapers import all_sources  # noqa: E402
from gpucat.warehouse import db  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402
from tests.flows.test_refresh import broken_capture  # noqa: E402

# The rate sources (their own phase) and every third other source, from the registry: both
# phases run, EUR prices are converted with the rates the same run loaded, and the run stays short.
_FIRST, _REST, *_FALLBACKS = pipeline.phases(sorted(all_sources().values(), key=lambda s: s.name))  # fallbacks: a phase of their own
# A name that is also a provider with several sources (`tensordock`) selects all of them: leave those out.
_SHARED = {s.provider for s in all_sources().values() if sum(t.provider == s.provider for t in all_sources().values()) > 1}
_REST = [s for s in _REST if s.name not in _SHARED]
SOURCES = sorted([s.name for s in _FIRST] + [s.name for s in _REST[::3]])
BROKEN = _REST[0].name
STEPS = ("prepare",)  # what runs on workers: start and load stay in the flow's process

RUNS = "SELECT source, provider, status, rows_fetched, rows_valid, rows_rejected, rows_skipped, error FROM scrape_runs ORDER BY source"


def table(path: Path, sql: str) -> list[tuple]:
    with db.connect(path, read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(**local_cluster_kwargs(2, processes=True)) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> Path:
    """The fixtures, with BROKEN's bodies replaced by a sign-in page (its parse fails)."""
    return broken_capture(tmp_path_factory.mktemp("capture"), BROKEN, "login-page")


@pytest.fixture(scope="module")
def on_dask(cluster, capture, tmp_path_factory):
    path = tmp_path_factory.mktemp("dask") / "gpucat.duckdb"
    state = run_refresh(dask_task_runner(cluster.scheduler_address), providers=SOURCES, replay_dir=str(capture), db_path=str(path))
    with Client(cluster) as client:
        ran = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
        worker_pids = client.run(os.getpid)
    return path, state, ran, worker_pids


def test_every_source_is_refreshed_and_recorded_on_the_cluster(on_dask):
    path, state, _, _ = on_dask
    assert state.is_failed() and BROKEN in state.message, state.message
    summary = {row["source"]: (row["status"], row["error"]) for row in state.result(raise_on_failure=False)}
    assert sorted(summary) == SOURCES
    assert {s: status for s, (status, _) in summary.items()} == {s: "failed" if s == BROKEN else "ok" for s in SOURCES}
    assert summary[BROKEN][1]  # the worker's exception, pickled back, names what went wrong
    assert [(source, status) for source, _, status, *_ in table(path, RUNS)] == [
        (s, "failed" if s == BROKEN else "ok") for s in SOURCES
    ]


def test_the_steps_ran_in_worker_processes(on_dask):
    _, _, ran, worker_pids = on_dask
    assert len(set(worker_pids.values())) == 2 and os.getpid() not in worker_pids.values()
    # Dask names a task after its function: the flow's preparations ran there.
    steps = {t.fn.__name__ for t in vars(refresh_module).values() if isinstance(t, Task) and t.name in STEPS}
    assert len(steps) == len(STEPS) and steps <= set(ran), ran


def test_writer_travels_as_its_path(tmp_path):
    writer = pickle.loads(pickle.dumps(db.writer(tmp_path / "w.duckdb")))
    with writer.open() as con:
        assert con.execute("SELECT 1").fetchone() == (1,)
    with pytest.raises(TypeError, match="open connection"):
        pickle.dumps(db.writer(":memory:"))


def test_served_runs_on_dask_get_their_runner_from_serve_not_the_environment(monkeypatch, tmp_path):
    """`gpucat serve --dask-address` hands Prefect's runner the flow object with its Dask task
    runner; each run's process unpickles that object (cloudpickle, as Prefect's in-memory serve
    path does), so nothing goes through os.environ."""
    import cloudpickle
    from prefect_dask import DaskTaskRunner

    from gpucat.flows import serve as serve_module
    from gpucat.flows.serve import DaskCluster, deployment
    from gpucat.schedules import load_groups
    from gpucat.schemas.settings import Settings

    address, target = "tcp://127.0.0.1:8786", (tmp_path / "x.duckdb").resolve()
    plain = deployment(load_groups(), target, every=5)
    on_dask = deployment(load_groups(), target, every=5, dask=DaskCluster(address=address))
    assert (on_dask.name, on_dask.parameters, on_dask.entrypoint) == (plain.name, plain.parameters, plain.entrypoint)

    served: dict = {}
    monkeypatch.setattr(serve_module, "api_url", lambda: "http://127.0.0.1:9/api")
    monkeypatch.setattr(type(refresh_module.refresh), "serve", lambda flow, **options: served.update(flow=flow, **options))
    environ = dict(os.environ)
    serve_module.serve(every=5, db_path=target, dask=DaskCluster(address=address), settings=Settings.from_env({}))
    assert dict(os.environ) == environ
    flow = cloudpickle.loads(cloudpickle.dumps(served["flow"]))
    assert flow.name == refresh_module.refresh.name
    assert isinstance(flow.task_runner, DaskTaskRunner) and flow.task_runner.address == address
    limit = served["global_limit"]
    assert (served["name"], served["parameters"], limit.limit, limit.collision_strategy) == (
        plain.name, plain.parameters, plain.concurrency_limit, plain.concurrency_options.collision_strategy)


def test_cli_refresh_on_a_dask_cluster_with_a_relative_db(cluster, tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from gpucat.cli import app

    # The rate sources and one offer source; the workers' working directory is not this one.
    names = sorted([s.name for s in _FIRST] + [_REST[-1].name])
    monkeypatch.chdir(tmp_path)
    args = ["refresh", "--dask-address", cluster.scheduler_address, "-p", ",".join(names), "--replay", str(FIXTURES)]
    result = CliRunner().invoke(app, [*args, "--db", "rel.duckdb", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["state"], sorted((r["source"], r["status"]) for r in report["sources"])) == ("COMPLETED", [(n, "ok") for n in names])
    assert [s for s, *_ in table(tmp_path / "rel.duckdb", RUNS)] == names


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dask-address", "tcp://127.0.0.1:8786", "--dask-workers", "2"], "--dask-workers sizes a local cluster"),
        (["--dask"], "needs prefect-dask: install gpucat[dask]"),
    ],
)
def test_cli_dask_options_fail_in_one_line(args, message, tmp_path, monkeypatch):
    import sys

    from typer.testing import CliRunner

    from gpucat.cli import app

    monkeypatch.setitem(sys.modules, "prefect_dask", None)  # as if the extra were not installed
    result = CliRunner().invoke(app, ["refresh", *args, "--replay", str(FIXTURES), "--db", str(tmp_path / "g.duckdb")])
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "g.duckdb").exists()
