"""Read-side queries over the warehouse: status, offers, arbitrary SQL."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from gpucat.schemas.errors import QueryError
from gpucat.warehouse import sandbox
from gpucat.warehouse.db import query_sql

# Rows fetched from DuckDB at a time by `gpucat sql`.
BATCH_ROWS = 2048


@dataclass(frozen=True)
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    total: int | None = None  # rows that matched before a limit cut them, where the query counts them

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def run_query(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> Result:
    cursor = con.execute(sql, params or {})
    columns = [d[0] for d in cursor.description or []]
    return Result(columns, cursor.fetchall())


def status(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> list[dict[str, Any]]:
    """One entry per registered source (never-run ones too), newest run first-class."""
    from gpucat.scrapers import all_sources  # imports every source module: only `status` needs the list

    now = now or datetime.now(UTC)
    seen = {row["source"]: row for row in run_query(con, query_sql("status")).records()}
    out = []
    for name, source in all_sources().items():
        row = seen.pop(name, None) or {"source": name, "provider": source.provider, "status": "never run", "unknown_gpus": [], "quarantined_runs": []}
        last = row.get("last_run_at")
        row["age_s"] = round((now - last).total_seconds()) if last else None
        out.append(row)
    out.extend(seen.values())  # runs of sources no longer registered stay visible
    return out


def data_fields(data: dict[str, Any] | None) -> dict[str, Any]:
    """A status row's data columns: how old the source's data is (not its last run) and whether
    it came from a replayed capture, and which (`gpucat.freshness.data_age`)."""
    data = data or {}
    age = data.get("age_hours")
    return {"data_seen_at": data.get("seen_at"), "data_age_s": None if age is None else round(age * 3600),
            "capture": data.get("capture"), "captured_at": data.get("captured_at")}


def offers(
    con: duckdb.DuckDBPyConnection,
    *,
    gpus: Sequence[str] = (),
    providers: Sequence[str] = (),
    min_gpu_memory_gb: float | None = None,
    max_usd_per_gpu_hour: float | None = None,
    market: str | None = None,
    available_only: bool = False,
    include_stale: bool = False,
    gpu_count: int | None = None,
    limit: int | None = 50,
) -> Result:
    """Current offers, cheapest per GPU-hour first; stale ones only with `include_stale`; all of
    them when `limit` is None. `total` counts every match, so a caller that shows a few rows
    need not fetch the rest to say how many there were."""
    params = {
        "gpus": [g.lower() for g in gpus],
        "gpu_count": gpu_count,
        "include_stale": include_stale,
        "providers": [p.lower() for p in providers],
        "min_gpu_memory_gb": min_gpu_memory_gb,
        "max_usd_per_gpu_hour": max_usd_per_gpu_hour,
        "market": market,
        "available_only": available_only,
        "limit": limit,
    }
    counted = run_query(con, query_sql("offers"), params)  # its last column counts every match, past the limit
    total = counted.rows[0][-1] if counted.rows else 0
    return Result(counted.columns[:-1], [row[:-1] for row in counted.rows], total)


def run_sql(con: duckdb.DuckDBPyConnection, sql: str, *, write: bool = False, timeout_s: float | None = None) -> Result:
    """Exactly one statement, in the sandbox (`warehouse.sandbox`), every row fetched."""
    with stream_sql(con, sql, write=write, timeout_s=timeout_s) as run:
        return Result(run.columns, [row for batch in run.batches for row in batch])


@dataclass
class SqlRun:
    """A running statement: its column names and its rows, a batch at a time, as DuckDB makes them."""

    columns: list[str]
    batches: Iterator[list[tuple[Any, ...]]]


@contextmanager
def stream_sql(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    *,
    write: bool = False,
    timeout_s: float | None = None,
    memory_limit: str = sandbox.DEFAULT_MEMORY_LIMIT,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[SqlRun]:
    """Run one statement in the sandbox on a worker thread and hand its rows over in batches.

    The statement runs apart from this thread so that Ctrl-C (KeyboardInterrupt, which Python
    delivers only to the main thread, between bytecodes) and the timeout are noticed while DuckDB
    works, and both stop it with `con.interrupt()`. Rows are fetched a batch at a time, so memory
    holds a batch, not the result; leaving the block early (a row cap) stops the statement too.
    The connection is unusable for anything else after.
    """
    sandbox.check_statement(con, sql, write=write)
    sandbox.lock_down(con, memory_limit=memory_limit)
    handoff: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def put(item: tuple[str, Any]) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            cursor = con.execute(sql)
            if not put(("columns", [d[0] for d in cursor.description or []])):
                return
            while batch := cursor.fetchmany(batch_rows):
                if not put(("rows", batch)):
                    return
            put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            put(("error", exc))

    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    worker = threading.Thread(target=work, name="gpucat-sql", daemon=True)

    def take() -> tuple[str, Any]:
        try:
            while True:
                if deadline is not None and time.monotonic() > deadline:
                    con.interrupt()
                    raise QueryError(f"the statement ran longer than {timeout_s:g} s and was stopped (see --timeout)")
                try:
                    kind, value = handoff.get(timeout=0.05)
                except queue.Empty:
                    continue
                if kind == "error":
                    if isinstance(value, duckdb.InterruptException):
                        raise QueryError("the statement was interrupted")
                    if isinstance(value, duckdb.Error):
                        raise QueryError(_first_line(value))
                    raise value
                return kind, value
        except KeyboardInterrupt:
            con.interrupt()
            raise QueryError("interrupted (Ctrl-C): the statement was stopped") from None

    def batches() -> Iterator[list[tuple[Any, ...]]]:
        while True:
            kind, value = take()
            if kind == "end":
                return
            yield value

    worker.start()
    try:
        _, columns = take()
        yield SqlRun(columns, batches())
    finally:
        if worker.is_alive():
            stop.set()
            con.interrupt()
            worker.join(timeout=5)


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
