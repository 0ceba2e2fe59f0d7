"""Anomaly quarantine: batches that validate row by row but do not look like the truth.

Row validation (schemas/) judges each row alone. These checks judge a source's whole batch
against the catalog and against the source's last good run, before anything is merged:

- a GPU model's median price per GPU-hour moved more than `MAX_MEDIAN_MOVE` times against the
  last good run, or drifted more than `MAX_MEDIAN_MOVE` times from any median the source listed
  within `DRIFT_WINDOW` (so ten small steps cannot walk a price where one big step may not);
- a GPU model's median is more than `CROSS_PROVIDER_BAND` times off the median of the other
  providers' offers, when at least `QUORUM` other providers list the model;
- more than `MAX_IMPLAUSIBLE_SHARE` of its offers have implausible prices: outside the reviewed
  absolute bounds of their GPU model (`schemas/reference/gpu_price_bounds.csv`), outside the
  band of its anchor (divided or multiplied by `PLAUSIBLE_BAND`), or more than `MAX_ROW_JUMP`
  times their own last good price;
- its rejected share passed `rejected_share_limit` (higher than the last good run's by a margin);
- a region or a price-list file (source_url) lost more than `MAX_LOST_SHARE` of its offers.

A batch that fails any check is quarantined: kept in `quarantines`/`quarantined_rows` for
inspection and not loaded; `gpucat accept RUN_ID` loads it deliberately. A batch that passes
still loses its few implausible rows: each becomes a `Rejected` row, and its offer keeps its
last good version, so `fit` never recommends a $0.0001 H100.

Thresholds are constants here, not per provider. Anchors come from outside the batch being
judged: the reviewed bounds first; then the other providers' median, trusted only with a quorum
(a new source or provider is judged against the others, never against itself); then the
source's own last good offers; the batch's own median only catches single odd rows, never
vouches for the batch. So the first source of an empty catalog cannot set the anchor.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from statistics import median
from typing import Any, NamedTuple

import duckdb
import polars as pl

from gpucat.schemas.errors import UserInputError
from gpucat.schemas.records import Rejected
from gpucat.schemas.reference import gpu_price_bounds
from gpucat.schemas.validate import CONTRACTS, Validated
from gpucat.warehouse.db import query_sql

# A batch's median price of a GPU model may move this many times (either way) against the last good run.
MAX_MEDIAN_MOVE = 3.0
# A price this many times under or over its GPU model's catalog median is implausible. The
# fixtures' widest legitimate spread between sources (a marketplace V100 at $0.09 against a
# hyperscaler's $3.06: 34x) fits inside it, whichever of the two loaded first.
PLAUSIBLE_BAND = 50.0
# How far back a source's own medians are remembered: a batch may not drift over MAX_MEDIAN_MOVE from any of them.
DRIFT_WINDOW = timedelta(days=30)
# The other providers' median of a model anchors a batch only when this many providers list it.
QUORUM = 3
# A batch's median of a model may be this many times off the other providers' median. The
# fixtures' widest (OCI's L40S at $3.50 against the others' $0.91: 3.8x) fits inside it twice.
CROSS_PROVIDER_BAND = 8.0
# An offer's price may move this many times (either way) against its own last good version.
MAX_ROW_JUMP = 10.0
# Up to this share of a batch's offers may be implausible one by one (rejected); more is a unit error.
MAX_IMPLAUSIBLE_SHARE = 0.1
# Rejected share: never over RISE above the last good run's, and over FIRST_RUN with no good run yet.
REJECTED_SHARE_RISE = 0.25
REJECTED_SHARE_FLOOR = 0.5
REJECTED_SHARE_FIRST_RUN = 0.75
# A region or price-list file may lose this share of its offers (and at least MIN_LOST_ROWS) at most.
MAX_LOST_SHARE = 0.2
MIN_LOST_ROWS = 2


@dataclass(frozen=True)
class Verdict:
    """The anomaly checks' answer: why to quarantine (empty: load), and the batches to load."""

    reasons: list[str]
    batches: list[Validated]  # implausible rows moved to `rejected`


class LastGood(NamedTuple):
    """Row counts of a source's most recent successful run."""

    rows_valid: int
    rows_fetched: int
    rows_rejected: int


def last_good_run(con: duckdb.DuckDBPyConnection, source: str) -> LastGood | None:
    rows = con.execute(query_sql("previous_ok_run"), {"source": source}).fetchall()
    return LastGood(*rows[0]) if rows else None


def inspect(
    con: duckdb.DuckDBPyConnection, source: str, batches: Sequence[Validated], last_good: LastGood | None, *,
    has_offers: bool = True, has_medians: bool = True,
) -> Verdict:
    """Run every check over a source's validated batches against the warehouse as it stands
    (`last_good`: `last_good_run(con, source)`, which the load's own checks read too).
    `has_offers`/`has_medians` False: the caller knows the source holds no current offers or
    no medians, so those reads would find nothing and are left out."""
    reasons: list[str] = []
    checked: list[Validated] = []
    rejected = sum(len(b.rejected) for b in batches)
    total = rejected + sum(b.frame.height for b in batches)
    for batch in batches:
        reasons.extend(conflicting_duplicates(batch))
        if batch.table != "offers" or not batch.frame.height:
            checked.append(batch)
            continue
        current = _rows(con, "source_current_offers", {"source": source}) if has_offers else []
        last_prices = {(row["provider"], row["offer_id"]): row["usd_per_gpu_hour"] for row in current}
        others = other_providers(con, batch.frame["provider"][0])
        plausible, implausible = split_implausible(batch, others, last_prices, own_medians(current))
        if len(implausible) > MAX_IMPLAUSIBLE_SHARE * batch.frame.height:
            reasons.append(f"{len(implausible)} of {batch.frame.height} offers have implausible prices, e.g. {implausible[0].reasons[0]}")
        moves = median_moves(batch.frame, current)
        reasons.extend(moves)
        since = batch.frame["scraped_at"].max() - DRIFT_WINDOW  # type: ignore[operator]
        drifts = median_drifts(batch.frame, _rows(con, "source_median_range", {"source": source, "since": since}) if has_medians else [])
        reasons.extend(d for d in drifts if not any(m.startswith(d.split(" drifted ")[0] + " moved") for m in moves))  # one reason per model
        reasons.extend(cross_provider_moves(batch.frame, others))
        reasons.extend(lost_rows(batch, current))
        checked.append(plausible)
    limit = rejected_share_limit(last_good)
    if total and rejected / total > limit:
        reasons.append(f"{rejected} of {total} rows rejected ({rejected / total:.0%}), over the {limit:.0%} limit")
    return Verdict(reasons, checked)


class Anchor(NamedTuple):
    median: float
    of: str  # what the median is of, for the rejection's reason


def other_providers(con: duckdb.DuckDBPyConnection, provider: str) -> dict[str, Anchor]:
    """GPU model -> the median of the other providers' current offers, where QUORUM providers list it."""
    return {
        row["gpu_model"]: Anchor(row["median_usd_per_gpu_hour"], f"{row['providers']} other providers' offers of {row['gpu_model']}")
        for row in _rows(con, "other_providers_gpu_medians", {"provider": provider})
        if row["providers"] >= QUORUM
    }


def own_medians(current: list[dict[str, Any]]) -> dict[str, Anchor]:
    by_model: dict[str, list[float]] = defaultdict(list)
    for row in current:
        by_model[row["gpu_model"]].append(row["usd_per_gpu_hour"])
    return {model: Anchor(median(prices), f"this source's last good offers of {model}") for model, prices in by_model.items()}


def split_implausible(
    batch: Validated,
    others: dict[str, Anchor],
    last_good: dict[tuple[str, str], float] | None = None,
    own: dict[str, Anchor] | None = None,
) -> tuple[Validated, list[Rejected]]:
    """The batch without implausible prices, and those rows as `Rejected`.

    Implausible: outside the reviewed bounds of the offer's GPU model; outside the band of its
    anchor (the other providers' median with a quorum, else the source's last good median,
    else the batch's own median, which only singles out odd rows); or a jump of over
    MAX_ROW_JUMP times against the offer's own last good price.
    """
    last_good = last_good or {}
    batch_medians = {
        model: Anchor(price, f"this batch's offers of {model}")
        for model, price in batch.frame.group_by("gpu_model").agg(pl.col("usd_per_gpu_hour").median()).iter_rows()
    }
    anchors = {**batch_medians, **(own or {}), **others}
    bounds = gpu_price_bounds()
    bad: list[int] = []
    rejected: list[Rejected] = []
    for i, row in enumerate(batch.frame.iter_rows(named=True)):
        model, price = row["gpu_model"], row["usd_per_gpu_hour"]
        anchor = anchors[model]
        low, high = anchor.median / PLAUSIBLE_BAND, anchor.median * PLAUSIBLE_BAND
        bound = bounds.get(model)
        before = last_good.get((row["provider"], row["offer_id"]))
        if bound and not bound.min_usd_per_gpu_hour <= price <= bound.max_usd_per_gpu_hour:
            reason = (
                f"implausible_price: usd_per_gpu_hour {price:g} outside the reference bounds "
                f"[{bound.min_usd_per_gpu_hour:g}, {bound.max_usd_per_gpu_hour:g}] of {model}"
            )
        elif not low <= price <= high:
            reason = (
                f"implausible_price: usd_per_gpu_hour {price:g} outside [{low:.4g}, {high:.4g}], "
                f"1/{PLAUSIBLE_BAND:g} to {PLAUSIBLE_BAND:g}x the median {anchor.median:.4g} of {anchor.of}"
            )
        elif before and max(price / before, before / price) > MAX_ROW_JUMP:
            reason = f"implausible_jump: usd_per_gpu_hour {before:g} -> {price:g} ({max(price / before, before / price):.0f}x) against its last good version"
        else:
            continue
        bad.append(i)
        rejected.append(Rejected(batch.table, (reason,), row))
    if not bad:
        return batch, []
    frame = batch.frame.with_row_index("_i").filter(~pl.col("_i").is_in(bad)).drop("_i")
    return Validated(batch.table, frame, [*batch.rejected, *rejected]), rejected


def _batch_medians(frame: pl.DataFrame) -> list[tuple[str, float]]:
    return sorted(frame.group_by("gpu_model").agg(pl.col("usd_per_gpu_hour").median()).iter_rows())


def median_drifts(frame: pl.DataFrame, ranges: list[dict[str, Any]]) -> list[str]:
    """GPU models whose median is more than MAX_MEDIAN_MOVE times off any median the source listed within DRIFT_WINDOW."""
    known = {row["gpu_model"]: (row["lowest"], row["highest"]) for row in ranges}
    out = []
    for model, now in _batch_medians(frame):
        if model not in known:
            continue
        lowest, highest = known[model]
        drift = max(highest / now, now / lowest)
        if drift > MAX_MEDIAN_MOVE:
            out.append(
                f"median price of {model} drifted {drift:.1f}x from its range {lowest:.4g}-{highest:.4g} USD/GPU-h "
                f"over the last {DRIFT_WINDOW.days} days to {now:.4g}"
            )
    return out


def cross_provider_moves(frame: pl.DataFrame, others: dict[str, Anchor]) -> list[str]:
    """GPU models whose median is more than CROSS_PROVIDER_BAND times off the other providers' (with a quorum)."""
    out = []
    for model, now in _batch_medians(frame):
        if model not in others:
            continue
        then = others[model].median
        move = max(now / then, then / now)
        if move > CROSS_PROVIDER_BAND:
            out.append(f"median price of {model} is {move:.1f}x off the median {then:.4g} of {others[model].of} ({now:.4g} USD/GPU-h)")
    return out


def conflicting_duplicates(batch: Validated) -> list[str]:
    """A key listed twice with different content: which row is the truth is unknowable, so the batch is held."""
    conflicts = [r for r in batch.rejected if r.reasons and r.reasons[0].startswith("conflicting_duplicate_key")]
    keys = list(dict.fromkeys(r.reasons[0] for r in conflicts))
    if not keys:
        return []
    return [f"{len(keys)} {batch.table} keys listed twice with different content, e.g. {keys[0].partition(': ')[2]}"]


def median_moves(frame: pl.DataFrame, current: list[dict[str, Any]]) -> list[str]:
    """GPU models whose median price moved more than MAX_MEDIAN_MOVE times against the last good run."""
    before: dict[str, list[float]] = defaultdict(list)
    for row in current:
        before[row["gpu_model"]].append(row["usd_per_gpu_hour"])
    out = []
    for model, now in sorted(frame.group_by("gpu_model").agg(pl.col("usd_per_gpu_hour").median()).iter_rows()):
        if model not in before:
            continue
        then = median(before[model])
        move = max(now / then, then / now)
        if move > MAX_MEDIAN_MOVE:
            out.append(f"median price of {model} moved {move:.1f}x ({then:.4g} -> {now:.4g} USD/GPU-h) against the last good run")
    return out


def lost_rows(batch: Validated, current: list[dict[str, Any]]) -> list[str]:
    """Regions and price-list files that lost more than MAX_LOST_SHARE of their offers.

    An offer still listed counts as present whether it validated or was rejected this run; an
    offer gone from a region that lost only a few is news (a retired instance), not a cut file.
    """
    present = set(batch.frame.select("provider", "offer_id").iter_rows())
    present |= {(r.row.get("provider"), r.row.get("offer_id")) for r in batch.rejected}
    out = []
    for column, what in (("region", "region"), ("source_url", "file")):
        had: Counter[str] = Counter(row[column] for row in current)
        lost: Counter[str] = Counter(row[column] for row in current if (row["provider"], row["offer_id"]) not in present)
        for name, n in sorted(lost.items()):
            if n >= MIN_LOST_ROWS and n > MAX_LOST_SHARE * had[name]:
                out.append(f"{what} {name} lost {n} of its {had[name]} offers against the last good run")
    return out


def rejected_share_limit(last_good: LastGood | None) -> float:
    if last_good is None or not last_good.rows_fetched:
        return REJECTED_SHARE_FIRST_RUN
    return max(REJECTED_SHARE_FLOOR, last_good.rows_rejected / last_good.rows_fetched + REJECTED_SHARE_RISE)


# --- keeping and reading back quarantined batches ---------------------------------------------


def keep(con: duckdb.DuckDBPyConnection, run_id: str, source: str, provider: str, at: datetime, batches: Sequence[Validated], reasons: Sequence[str]) -> None:
    """Store a quarantined batch's rows as validation passed them (call inside the load's transaction)."""
    con.execute(query_sql("quarantine_insert"), {"run_id": run_id, "source": source, "provider": provider, "reasons": list(reasons), "at": at})
    rows = [
        {"run_id": run_id, "table": batch.table, "row": json.dumps(row, sort_keys=True, default=_iso)}
        for batch in batches
        for row in batch.frame.iter_rows(named=True)
    ]
    if rows:
        con.executemany(query_sql("quarantined_row_insert"), rows)


@dataclass(frozen=True)
class Quarantined:
    run_id: str
    source: str
    provider: str
    quarantined_at: datetime
    batches: list[Validated]  # with the run's rejected rows, so their offers keep their versions


def read(con: duckdb.DuckDBPyConnection, run_id: str) -> Quarantined:
    """A quarantined run, ready to load; refuses unknown, accepted or superseded ones."""
    row = con.execute(query_sql("quarantine_get"), {"run_id": run_id}).fetchone()
    if row is None:
        raise UserInputError(f"no quarantined run {run_id!r}; `gpucat status` lists them")
    source, provider, at, accepted, newer = row
    if accepted:
        raise UserInputError(f"quarantined run {run_id} was already accepted (as run {accepted})")
    if newer:
        raise UserInputError(f"{source} has loaded a good run since {run_id} was quarantined; accepting it would replace newer data")
    stored: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rejected: dict[str, list[Rejected]] = defaultdict(list)
    for table, reasons, text in con.execute(query_sql("quarantined_batch"), {"run_id": run_id}).fetchall():
        if reasons is None:
            stored[table].append(json.loads(text))
        else:
            rejected[table].append(Rejected(table, tuple(reasons), json.loads(text)))
    tables = sorted(set(stored) | set(rejected))
    return Quarantined(run_id, source, provider, at, [Validated(t, frame_from_rows(t, stored[t]), rejected[t]) for t in tables])


def frame_from_rows(table: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows read back from JSON as a frame of the table's contract (dates and times parsed)."""
    schema = CONTRACTS[table].polars_schema()
    for row in rows:
        for name, dtype in schema.items():
            if isinstance(row.get(name), str) and isinstance(dtype, pl.Datetime):
                row[name] = datetime.fromisoformat(row[name])
            elif isinstance(row.get(name), str) and dtype == pl.Date:
                row[name] = date.fromisoformat(row[name])
    return pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def mark_accepted(con: duckdb.DuckDBPyConnection, run_id: str, accepted_run_id: str, at: datetime) -> None:
    con.execute(query_sql("quarantine_accept"), {"at": at, "accepted": accepted_run_id, "run_id": run_id})


def _rows(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cursor = con.execute(query_sql(name), params)
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, (date, datetime)) else str(value)
