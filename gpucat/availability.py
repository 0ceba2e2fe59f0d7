"""What `--available` means per provider, and which filter emptied an answer.

Providers differ: RunPod, Vast, Lambda and a few others report stock per offer; AWS, Azure, GCP
and most list-price pages publish none, so their offers are `unknown`. `--available` drops only
offers a provider reports out of stock (`unavailable`); unknown stock stays and is shown as
unknown, because a list price without stock data is not evidence of no stock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import duckdb

from gpucat.warehouse.db import query_sql

T = TypeVar("T")


def stock_reporting(con: duckdb.DuckDBPyConnection, providers: Sequence[str] = ()) -> dict[str, bool]:
    """Provider -> whether any of its current offers carries stock data (available/unavailable)."""
    rows = con.execute(query_sql("stock_by_provider"), {"providers": [p.lower() for p in providers]}).fetchall()
    return dict(rows)


def available_note(con: duckdb.DuckDBPyConnection, providers: Sequence[str] = ()) -> str:
    """One line saying what --available kept: who reports stock and who publishes none."""
    reporting = stock_reporting(con, providers)
    with_stock = sorted(p for p, reports in reporting.items() if reports)
    without = sorted(p for p, reports in reporting.items() if not reports)
    parts = ["--available drops offers reported out of stock"]
    if with_stock:
        parts.append(f"stock reported by {', '.join(with_stock)}")
    if without:
        parts.append(f"no stock published by {', '.join(without)} (kept, shown as unknown)")
    return "; ".join(parts)


def why_empty(options: T, count: Callable[[T], int], steps: Sequence[tuple[str, str, Any]]) -> str | None:
    """Name the filter that left nothing, or None when the answer is empty even without filters.

    `steps` are (label, field of `options`, the field's "off" value), in the order to apply them;
    `count(options)` runs the query. Filters are added one at a time to the unfiltered query and
    the first that takes the count to zero is named, with how many rows it removed.
    """
    active = [(label, field, off) for label, field, off in steps if getattr(options, field) != off]
    relaxed = replace(options, **{field: off for _, field, off in active})  # type: ignore[type-var]
    before = count(relaxed)
    if before == 0:
        return None
    for label, field, _ in active:
        relaxed = replace(relaxed, **{field: getattr(options, field)})  # type: ignore[type-var]
        after = count(relaxed)
        if after == 0:
            return f"{label} left none of the {before} that match otherwise"
        before = after
    return None
