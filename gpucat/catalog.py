"""Read-side queries over the warehouse: status, offers, arbitrary SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from schemas.errors import QueryError
from warehouse.db import query_sql


@dataclass(frozen=True)
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def run_query(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> Result:
    cursor = con.execute(sql, params or {})
    columns = [d[0] for d in cursor.description or []]
    return Result(columns, cursor.fetchall())


def status(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> list[dict[str, Any]]:
    """One entry per registered source (never-run ones too), newest run first-class."""
    from scrapers import all_sources  # imports every source module: only `status` needs the list

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
    them when `limit` is None."""
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
    return run_query(con, query_sql("offers"), params)


# The sandbox `gpucat sql` runs a user's statement in: no file system, network, ATTACH, COPY TO,
# EXPORT, INSTALL or LOAD, no Python variables mistaken for tables, and the configuration locked
# so the statement cannot turn any of that back on. `--write` may change the warehouse only.
SANDBOX = (
    "SET python_enable_replacements = false",
    "SET enable_external_access = false",
    "SET lock_configuration = true",
)


def run_sql(con: duckdb.DuckDBPyConnection, sql: str) -> Result:
    """Exactly one statement, in the sandbox; the connection is unusable for anything else after."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
    if len(statements) != 1:
        raise QueryError("give exactly one SQL statement" + (f" (got {len(statements)})" if statements else ""))
    for setting in SANDBOX:
        con.execute(setting)
    try:
        return run_query(con, sql)
    except duckdb.Error as exc:
        raise QueryError(str(exc).splitlines()[0]) from None
