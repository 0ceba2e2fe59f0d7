"""Read-side queries over the provider terms: side by side, in full, and which are stale.

`providers` is reference data (schemas/reference/terms/*.csv) loaded by every refresh;
`storage_terms` and `egress_terms` are views that merge the reviewed CSV rows with the prices the
terms sources scrape (scraped rows win for the provider and kind they cover; `origin` says which
a row is; docs/data-model.md). A term unknown to gpucat is NULL, never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import duckdb

from gpucat.catalog import Result, run_query
from gpucat.schemas.errors import UserInputError
from gpucat.warehouse.db import query_sql

# Terms verified longer ago than this are flagged by `gpucat status` and `gpucat providers`.
STALE_AFTER_DAYS = 180


def _today(today: date | None) -> date:
    return today or datetime.now(UTC).date()


def _check_known(con: duckdb.DuckDBPyConnection, providers: Sequence[str]) -> None:
    known = {row[0] for row in con.execute(query_sql("terms_oldest")).fetchall()}
    unknown = sorted(set(providers) - known)
    if unknown:
        raise UserInputError(f"no terms for provider {', '.join(unknown)}; known: {', '.join(sorted(known)) or 'none (run gpucat refresh)'}")


def side_by_side(
    con: duckdb.DuckDBPyConnection, providers: Sequence[str] = (), today: date | None = None
) -> Result:
    """One row per provider: billing, spot, fabric, cheapest persistent storage, internet egress,
    the oldest `verified_on` among its terms and whether that is older than STALE_AFTER_DAYS."""
    _check_known(con, providers)
    result = run_query(con, query_sql("terms_side_by_side"), {"providers": list(providers)})
    cutoff = _today(today).toordinal() - STALE_AFTER_DAYS
    at = result.columns.index("oldest_verified_on")
    rows = [(*row, row[at] is not None and row[at].toordinal() < cutoff) for row in result.rows]
    return Result([*result.columns, "stale"], rows)


def in_full(
    con: duckdb.DuckDBPyConnection, providers: Sequence[str] = (), today: date | None = None
) -> list[dict[str, Any]]:
    """Every provider's terms: its `providers` row (with evidence), the side-by-side summary,
    and its storage and egress rows; each row says in `null_reasons` why each NULL figure is NULL
    (not_published, not_found, not_applicable, or unexplained)."""
    summary = side_by_side(con, providers, today).records()
    wanted = {"providers": [row["provider"] for row in summary]}
    rules = run_query(con, query_sql("terms_null_reasons"), wanted).records()
    full = {row["provider"]: row for row in _explained("providers", run_query(con, query_sql("terms_full"), wanted).records(), rules)}
    storage = _by_provider(_explained("storage_terms", run_query(con, query_sql("terms_storage"), wanted).records(), rules))
    egress = _by_provider(_explained("egress_terms", run_query(con, query_sql("terms_egress"), wanted).records(), rules))
    return [
        {**row, **full[row["provider"]], "storage": storage.get(row["provider"], []), "egress": egress.get(row["provider"], [])}
        for row in summary
    ]


def _explained(table: str, rows: list[dict[str, Any]], rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # here, not at the top: `gpucat status` reads this module and must not pay for pandera
    from gpucat.schemas import null_reasons

    reasons = null_reasons.explain(table, rows, rules)
    return [{**row, "null_reasons": why} for row, why in zip(rows, reasons, strict=True)]


def _by_provider(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        grouped.setdefault(record.pop("provider"), []).append(record)
    return grouped


def stale(
    con: duckdb.DuckDBPyConnection, today: date | None = None, max_age_days: int = STALE_AFTER_DAYS
) -> list[dict[str, Any]]:
    """Terms rows last verified more than `max_age_days` ago: provider, table, item, verified_on."""
    params = {"today": _today(today), "max_age_days": max_age_days}
    return run_query(con, query_sql("terms_stale"), params).records()


def age_by_provider(con: duckdb.DuckDBPyConnection, today: date | None = None) -> dict[str, dict[str, Any]]:
    """Per provider, the oldest `verified_on` among its terms rows and whether it is stale."""
    cutoff = _today(today).toordinal() - STALE_AFTER_DAYS
    return {
        provider: {"terms_verified_on": oldest, "terms_stale": oldest.toordinal() < cutoff}
        for provider, oldest in con.execute(query_sql("terms_oldest")).fetchall()
    }
