"""How fresh each source's data is: its budget from the schedules file, its age from its runs.

The budgets reach the warehouse on every refresh (`source_schedules`), so plain SQL sees them
too: `current_offers.age_hours` and `current_offers.is_stale`. Read-side commands that leave
stale offers out (`fit`, `cost`) filter with `FRESH_OFFERS` and explain with `left_out_note`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb

from warehouse.db import query_sql

# The SQL predicate on current_offers (or any relation carrying its is_stale column, such as
# fit_offers): bind $include_stale. True keeps every offer; false keeps those within budget.
FRESH_OFFERS = "(CAST($include_stale AS BOOLEAN) OR NOT is_stale)"


def source_freshness(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, Any]]:
    """Per source with a budget: stale_after_hours, and stale (no good run within the budget)."""
    rows = con.execute(query_sql("source_freshness")).fetchall()
    return {row[0]: {"stale_after_hours": row[1], "stale": row[2]} for row in rows}


def stale_sources(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> list[dict[str, Any]]:
    """Sources whose current offers are past their budget: source, age_hours, stale_after_hours, offers.

    Aged to `now` when given (on a cursor of its own, so the caller's session is left as it was).
    """
    with con.cursor() as cursor:
        if now is not None:
            cursor.execute("SET VARIABLE gpucat_now = CAST($now AS TIMESTAMPTZ)", {"now": now})
        result = cursor.execute(query_sql("stale_sources"))
        columns = [d[0] for d in result.description or []]
        return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]


def left_out_note(stale: Sequence[dict[str, Any]], include_stale: bool) -> str | None:
    """One line saying which stale sources a result left out (or kept, with --include-stale)."""
    if not stale:
        return None
    names = ", ".join(f"{s['source']} ({s['age_hours']:.0f} h old, budget {s['stale_after_hours']:g} h)" for s in stale)
    if include_stale:
        return f"includes stale offers from {names}"
    return f"left out stale offers from {names}; --include-stale keeps them"
