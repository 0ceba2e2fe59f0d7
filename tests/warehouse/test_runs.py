"""A refresh records each source's run as `running` when it starts; a dead one is marked `interrupted`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import duckdb

from gpucat.warehouse import db, runs
from tests.conftest import FIXTURES, ROOT


def test_a_killed_refresh_leaves_running_rows_the_next_refresh_marks_interrupted(tmp_path):
    """A real refresh killed with SIGKILL after it recorded its start; the next run marks it."""
    path = tmp_path / "g.duckdb"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect")}
    env.pop("PREFECT_API_URL", None)
    child = subprocess.Popen([sys.executable, "-c", "from gpucat.cli import app; app()", "refresh", "--replay", str(FIXTURES),
                              "-p", "runpod-graphql", "--db", str(path), "--json"], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 120
    running: list = []
    while time.monotonic() < deadline and not running and child.poll() is None:
        time.sleep(0.02)
        try:
            with duckdb.connect(str(path), read_only=True) as con:
                running = con.execute("SELECT run_id, runner FROM scrape_runs WHERE status = 'running' AND source = 'runpod-graphql'").fetchall()
        except duckdb.Error:
            continue
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert running, "the refresh never recorded its start"
    (run_id, runner), = running
    assert runner.endswith(f":{child.pid}")
    with db.connect(path) as con:
        runs.interrupt_dead_runs(con, datetime.now(UTC))
        row = con.execute("SELECT status, error FROM scrape_runs WHERE run_id = $r", {"r": run_id}).fetchone()
    assert row[0] in ("interrupted", "ok")  # a kill that came after the outcome was recorded leaves `ok`
    if row[0] == "interrupted":
        assert "stopped before recording an outcome" in row[1]


def test_only_dead_runs_are_marked(tmp_path):
    from gpucat.pipeline import new_run
    from gpucat.scrapers import get_source

    now = datetime.now(UTC)
    with db.connect(tmp_path / "g.duckdb") as con:
        mine, gone, other_fresh, other_old = (new_run(get_source(s)) for s in ("runpod-graphql", "aws-spot", "ecb-rates", "lambda-instance-types"))
        other_old.started_at = now - timedelta(hours=30)
        runs.start_runs(con, [mine], runner=f"here:{os.getpid()}")
        runs.start_runs(con, [gone], runner="here:999999999")
        runs.start_runs(con, [other_fresh, other_old], runner="elsewhere:1")
        marked = runs.interrupt_dead_runs(con, now, host="here", alive=lambda pid: pid == os.getpid())
        statuses = dict(con.execute("SELECT source, status FROM scrape_runs").fetchall())
    assert sorted(marked) == sorted([gone.run_id, other_old.run_id])
    assert statuses == {"runpod-graphql": "running", "aws-spot": "interrupted", "ecb-rates": "running", "lambda-instance-types": "interrupted"}


def test_a_finished_run_replaces_its_running_row(tmp_path):
    from gpucat import pipeline
    from gpucat.scrapers import get_source

    with db.connect(tmp_path / "g.duckdb") as con:
        options = pipeline.FetchOptions(workdir=tmp_path, replay_dir=FIXTURES)
        done = pipeline.refresh_sources(con, [get_source("runpod-graphql")], options, prerequisites=False)
        rows = con.execute("SELECT run_id, status, runner FROM scrape_runs").fetchall()
    assert rows == [(done[0].run_id, "ok", None)]
