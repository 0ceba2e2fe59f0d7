"""Runs that started and never finished: a refresh records each source's run as `running` when it
starts, and the next refresh marks the ones whose process is gone `interrupted`.

A run names its process (`host:pid`, `runner`). On the same host a process that no longer exists
is dead for sure; a run of another host is presumed dead only after STALE_AFTER, since that host's
refresh may still be going.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from gpucat.warehouse.db import query_sql, staged

STALE_AFTER = timedelta(hours=24)


def this_runner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def start_runs(con: duckdb.DuckDBPyConnection, runs: Iterable[Any], runner: str | None = None) -> None:
    """One `running` row per run (RunRecord-like: run_id, flow_run_id, source, provider, started_at),
    all in one statement (one INSERT per run cost a new warehouse's refresh a twentieth of its time)."""
    runner = runner or this_runner()
    runs = list(runs)
    if not runs:
        return
    frame = pl.DataFrame(
        {
            "run_id": [r.run_id for r in runs],
            "flow_run_id": [r.flow_run_id for r in runs],
            "source": [r.source for r in runs],
            "provider": [r.provider for r in runs],
            "started_at": [r.started_at for r in runs],
            "runner": [runner] * len(runs),
        },
        schema={"run_id": pl.String, "flow_run_id": pl.String, "source": pl.String, "provider": pl.String,
                "started_at": pl.Datetime(time_zone="UTC"), "runner": pl.String},
    )  # fmt: skip
    with staged(con, "started_frame", frame):
        con.execute(query_sql("start_scrape_runs"))


def interrupt_dead_runs(
    con: duckdb.DuckDBPyConnection, now: datetime, *, host: str | None = None, alive: Callable[[int], bool] = process_alive
) -> list[str]:
    """Mark `interrupted` every `running` run whose process is gone; the ids marked."""
    host = host or socket.gethostname()
    marked = []
    for run_id, runner, started_at in con.execute(query_sql("running_runs")).fetchall():
        run_host, _, pid = (runner or "").rpartition(":")
        if run_host == host and pid.isdigit():
            dead = not alive(int(pid))
        else:
            dead = now - started_at > STALE_AFTER
        if dead:
            con.execute(query_sql("interrupt_run"), {"run_id": run_id, "now": now})
            marked.append(run_id)
    return marked
