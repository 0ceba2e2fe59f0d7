"""Read-side queries over the provider terms: side by side, in full, and which are stale.

The tables are reference data (schemas/reference/terms/*.csv) loaded by every refresh; a term
unknown to gpucat is NULL, never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import duckdb

from gpucat.catalog import Result
from schemas.errors import UserInputError
from warehouse.db import query_sql

# Terms verified longer ago than this are flagged by `gpucat status` and `gpucat providers`.
STALE_AFTER_DAYS = 180
STORAGE_COLUMNS = (
    "kind", "product", "usd_per_gb_month", "usd_per_gb_month_stopped", "original_currency", "original_price",
    "original_unit", "persists_on_stop", "persists_on_terminate", "billed_while_stopped", "max_size_gb",
    "read_throughput_mb_s", "source_url", "verified_on", "evidence", "notes",
)
EGRESS_COLUMNS = (
    "scope", "tier", "from_gb", "to_gb", "usd_per_gb", "original_price", "original_unit", "free_allowance_gb_month",
    "source_url", "verified_on", "evidence", "notes",
)


def _result(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> Result:
    cursor = con.execute(sql, params)
    return Result([d[0] for d in cursor.description or []], cursor.fetchall())


def _today(today: date | None) -> date:
    return today or datetime.now(UTC).date()


def _check_known(con: duckdb.DuckDBPyConnection, providers: Sequence[str]) -> None:
    known = {row[0] for row in con.execute("SELECT provider FROM providers").fetchall()}
    unknown = sorted(set(providers) - known)
    if unknown:
        raise UserInputError(f"no terms for provider {', '.join(unknown)}; known: {', '.join(sorted(known)) or 'none (run gpucat refresh)'}")


def side_by_side(
    con: duckdb.DuckDBPyConnection, providers: Sequence[str] = (), today: date | None = None
) -> Result:
    """One row per provider: billing, spot, fabric, cheapest persistent storage, internet egress,
    the oldest `verified_on` among its terms and whether that is older than STALE_AFTER_DAYS."""
    _check_known(con, providers)
    result = _result(con, query_sql("terms_side_by_side"), {"providers": list(providers)})
    cutoff = _today(today).toordinal() - STALE_AFTER_DAYS
    at = result.columns.index("oldest_verified_on")
    rows = [(*row, row[at] is not None and row[at].toordinal() < cutoff) for row in result.rows]
    return Result([*result.columns, "stale"], rows)


def in_full(
    con: duckdb.DuckDBPyConnection, providers: Sequence[str] = (), today: date | None = None
) -> list[dict[str, Any]]:
    """Every provider's terms: its `providers` row (with evidence) plus its storage and egress rows."""
    summary = side_by_side(con, providers, today)
    wanted = [r["provider"] for r in summary.records()]
    full = {
        r["provider"]: r
        for r in _result(con, "SELECT * FROM providers WHERE list_contains($p, provider)", {"p": wanted}).records()
    }
    storage = _by_provider(con, "storage_terms", STORAGE_COLUMNS, "kind, product", wanted)
    egress = _by_provider(con, "egress_terms", EGRESS_COLUMNS, "scope, tier", wanted)
    out = []
    for row in summary.records():
        name = row["provider"]
        out.append({
            **full[name],
            "persistent_storage_usd_per_gb_month": row["persistent_storage_usd_per_gb_month"],
            "egress_usd_per_gb": row["egress_usd_per_gb"],
            "egress_free_gb_month": row["egress_free_gb_month"],
            "oldest_verified_on": row["oldest_verified_on"],
            "stale": row["stale"],
            "storage": storage.get(name, []),
            "egress": egress.get(name, []),
        })
    return out


def _by_provider(
    con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], order: str, providers: list[str]
) -> dict[str, list[dict[str, Any]]]:
    # `table`, `columns` and `order` are this module's constants, never user input.
    sql = f"SELECT provider, {', '.join(columns)} FROM {table} WHERE list_contains($p, provider) ORDER BY provider, {order}"
    grouped: dict[str, list[dict[str, Any]]] = {}
    for record in _result(con, sql, {"p": providers}).records():
        grouped.setdefault(record.pop("provider"), []).append(record)
    return grouped


def stale(
    con: duckdb.DuckDBPyConnection, today: date | None = None, max_age_days: int = STALE_AFTER_DAYS
) -> list[dict[str, Any]]:
    """Terms rows last verified more than `max_age_days` ago: provider, table, item, verified_on."""
    params = {"today": _today(today), "max_age_days": max_age_days}
    return _result(con, query_sql("terms_stale"), params).records()


def age_by_provider(con: duckdb.DuckDBPyConnection, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Per provider, the oldest `verified_on` among its terms rows and whether it is stale."""
    cutoff = _today(today).toordinal() - STALE_AFTER_DAYS
    return {
        provider: {"terms_verified_on": oldest, "terms_stale": oldest.toordinal() < cutoff}
        for provider, oldest in con.execute(query_sql("terms_oldest")).fetchall()
    }
