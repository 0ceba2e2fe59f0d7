"""How fresh each source's data is: its budget from the schedules file, its age from its runs.

The budgets reach the warehouse on every refresh (`source_schedules`), so plain SQL sees them
too: `current_offers.age_hours` and `current_offers.is_stale`. Read-side commands (`offers`,
`fit`, `cost`, `report`) leave stale offers out with `FRESH_OFFERS` and explain with
`left_out_note`. An offer a replayed capture last saw is judged as of the capture's time
(migration 080), so a replay is never stale by the calendar; `data_age` says how old it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from gpucat.warehouse.db import query_sql

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
    if now is None:  # the caller's session, on its clock
        return _records(con.execute(query_sql("stale_sources")))
    with con.cursor() as cursor:
        cursor.execute("SET VARIABLE gpucat_now = CAST($now AS TIMESTAMPTZ)", {"now": now})
        return _records(cursor.execute(query_sql("stale_sources")))


def _records(result: Any) -> list[dict[str, Any]]:
    columns = [d[0] for d in result.description or []]
    return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]


def left_out_note(stale: Sequence[dict[str, Any]], include_stale: bool, most: int = 3) -> str | None:
    """One short line saying which stale sources a result left out (or kept, with --include-stale).

    Up to `most` sources are named with their age and budget; more are counted, the oldest named.
    """
    if not stale:
        return None
    names = ", ".join(f"{s['source']} ({s['age_hours']:.0f} h old, budget {s['stale_after_hours']:g} h)" for s in stale[:most])
    if len(stale) > most:
        names += f" and {len(stale) - most} more (gpucat status lists them)"
    if include_stale:
        return f"includes stale offers from {names}"
    return f"left out stale offers from {names}; --include-stale keeps them"


@dataclass(frozen=True)
class DataAge:
    """How old the catalog's data is, per source, and which of it was replayed from a capture.

    One reading for every command that shows data: a replay is labelled once, with its capture
    date and its age, wherever its data appears (table caption, JSON field, report banner, status).
    """

    sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # source -> seen_at, capture, captured_at, age_hours

    @property
    def replayed(self) -> dict[str, dict[str, Any]]:
        return {name: s for name, s in self.sources.items() if s["capture"] is not None}

    def as_json(self) -> dict[str, Any] | None:
        """The `data` field of JSON outputs: None when no data was replayed."""
        replayed = self.replayed
        if not replayed:
            return None
        captured = [s["captured_at"] or s["seen_at"] for s in replayed.values()]
        ages = [s["age_hours"] for s in replayed.values()]
        return {
            "replayed": True,
            "captures": sorted({s["capture"] for s in replayed.values()}),
            "captured_from": min(captured),
            "captured_to": max(captured),
            "age_hours_min": round(min(ages), 1),
            "age_hours_max": round(max(ages), 1),
            "replayed_sources": sorted(replayed),
            "live_sources": sorted(set(self.sources) - set(replayed)),
        }

    def label(self) -> str | None:
        """One line naming the replay, its capture dates and its age; None for live data only."""
        data = self.as_json()
        if data is None:
            return None
        first, last = data["captured_from"].date(), data["captured_to"].date()
        dates = f"{first}" if first == last else f"{first}..{last}"
        young, old = age_text(data["age_hours_min"]), age_text(data["age_hours_max"])
        if young == old:
            age = young
        elif young.split()[-1] == old.split()[-1]:  # one unit: "365-375 days"
            age = f"{young.split()[0]}-{old}"
        else:
            age = f"{young} to {old}"
        live = f"; {len(data['live_sources'])} sources live" if data["live_sources"] else ""
        return f"replayed data {age} old, captured {dates} ({', '.join(data['captures'])}){live}"


def age_text(hours: float) -> str:
    """An age a person reads at a glance: minutes, hours, then days."""
    if hours < 1:
        return f"{max(hours * 60, 0):.0f} min"
    if hours < 48:
        return f"{hours:.0f} h"
    return f"{hours / 24:.0f} days"


def data_age(con: duckdb.DuckDBPyConnection) -> DataAge:
    """Every source's data age and capture (warehouse/sql/data_clock.sql), aged to the session's clock."""
    rows = _records(con.execute(query_sql("data_clock")))
    return DataAge({row.pop("source"): row for row in rows})


def offer_ages(con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(provider, offer_id) -> how old that offer's data is and whether a replay loaded it."""
    if not keys:
        return {}
    rows = con.execute(query_sql("offer_ages"), {"keys": [f"{p}:{o}" for p, o in keys]}).fetchall()
    return {(p, o): {"data_age_hours": round(age, 1), "replayed": bool(replayed)} for p, o, age, replayed in rows}
