"""Loading a source's validated batch: batch checks, versioned merge, run and rejection records.

Each source loads in one transaction: its tables, its rejected rows and its `scrape_runs` row
commit together or not at all, so a failed or interrupted load leaves the previous state as
current truth.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import duckdb
import polars as pl

from gpucat.schemas.errors import BatchRejected
from gpucat.schemas.records import Rejected, row_json
from gpucat.schemas.validate import CONTRACTS, Validated
from gpucat.scrapers import siblings
from gpucat.warehouse import quarantine
from gpucat.warehouse.db import parquet_file, query_sql, transaction
from gpucat.warehouse.db import staged as staged_frame

VERSIONS_TABLE = {
    "offers": "offer_versions",
    "interruption_rates": "interruption_rate_versions",
    "exchange_rates": "exchange_rate_versions",
    "scraped_storage_terms": "scraped_storage_term_versions",
    "scraped_egress_terms": "scraped_egress_term_versions",
}
# Not part of a row's content: a new scrape of the same facts is not a new version (a scraped
# terms row's verified_on is its scrape day; the terms views date it by the last scrape instead).
VOLATILE = ("source_url", "scraped_at", "verified_on")
# A batch smaller than this fraction of the source's last good run is a collapse, not news.
MIN_ROW_RATIO = 0.5
# What a natural-key value of a rejected row may be for it to name a stored row.
_KEY_TYPES = (str, int, float, date)


@dataclass
class RunRecord:
    """What `scrape_runs` keeps about one source in one refresh."""

    run_id: str
    source: str
    provider: str
    started_at: datetime
    flow_run_id: str | None = None
    finished_at: datetime | None = None
    status: str = "ok"
    rows_fetched: int = 0
    rows_valid: int = 0
    rows_rejected: int = 0
    rows_skipped: int = 0  # out of scope for the source (e.g. CPU-only VMs): counted, not stored
    pages: int = 0
    error: str | None = None
    rejected: list[Rejected] = field(default_factory=list)
    # A replayed run: the capture directory it read (None: live) and the newest fetch time its
    # responses carry, set when it loads. Its offers are judged fresh as of that time.
    capture: str | None = None
    captured_at: datetime | None = None


def check_batch(source: str, rows_valid: int, last_good: quarantine.LastGood | None) -> None:
    """Zero rows, or fewer than half the last good run's, fail the source."""
    if rows_valid == 0:
        raise BatchRejected(f"{source}: no valid rows; keeping the previous data")
    previous = last_good.rows_valid if last_good else None
    if previous and rows_valid < MIN_ROW_RATIO * previous:
        raise BatchRejected(
            f"{source}: {rows_valid} valid rows is under {MIN_ROW_RATIO:.0%} of the last good run's {previous}; keeping the previous data"
        )


@dataclass
class Burst:
    """The loads of one burst, inside its one transaction (`gpucat.pipeline`), and what they
    leave to its end: each source loads once per burst and reads only its own runs and medians,
    so its run's outcome, its rejected rows and its medians are written for all the burst's
    sources at once (`finish`), and their last good runs are read at once when it starts.
    A load without a burst reads and writes its own, statement by statement."""

    last_good: dict[str, quarantine.LastGood] = field(default_factory=dict)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[tuple[RunRecord, list[Rejected]]] = field(default_factory=list)
    medians: list[tuple[str, datetime]] = field(default_factory=list)
    # (versions table or 'source_gpu_medians', source) for what each source held as the burst
    # started (burst_holdings.sql); None: unknown, read per load.
    holdings: set[tuple[str, str]] | None = None

    @classmethod
    def start(cls, con: duckdb.DuckDBPyConnection, sources: Sequence[str]) -> Burst:
        rows = con.execute(query_sql("previous_ok_runs"), {"sources": sorted(set(sources))}).fetchall()
        last_good = {source: quarantine.LastGood(*counts) for source, *counts in rows}
        # Sources that all loaded before hold their rows, as a rule: the holdings would spare
        # them nothing, and reading them scans every versioned table's history.
        if set(sources) <= set(last_good):
            return cls(last_good=last_good)
        holdings = {(holding, source) for holding, source in con.execute(query_sql("burst_holdings")).fetchall()}
        return cls(last_good=last_good, holdings=holdings)

    def holds(self, what: str, source: str) -> bool:
        """Whether `source` may hold rows of `what` (a versions table, or 'source_gpu_medians'):
        False only when it held none as the burst started, which its own load alone could change."""
        return self.holdings is None or (what, source) in self.holdings

    def finish(self, con: duckdb.DuckDBPyConnection) -> None:
        """Write what the burst's loads left to its end (inside its transaction)."""
        if self.outcomes:
            with staged_frame(con, "outcomes_frame", pl.DataFrame(self.outcomes, schema=_OUTCOME_SCHEMA)):
                con.execute(query_sql("finish_scrape_runs"))
                con.execute(query_sql("insert_finished_scrape_runs"))
        chunk: list[tuple[RunRecord, Rejected]] = []
        for run, rejected in self.rejected:
            for row in rejected:
                chunk.append((run, row))
                if len(chunk) == REJECTED_CHUNK:
                    _insert_rejected(con, chunk)
                    chunk = []
        if chunk:
            _insert_rejected(con, chunk)
        if self.medians:
            frame = pl.DataFrame(self.medians, schema={"source": pl.String, "observed_at": pl.Datetime(time_zone="UTC")}, orient="row")
            with staged_frame(con, "medians_frame", frame):
                con.execute(query_sql("record_burst_gpu_medians"))


def load_source(con: duckdb.DuckDBPyConnection, run: RunRecord, batches: Sequence[Validated], burst: Burst | None = None) -> None:
    """Batch checks, anomaly checks, then merge every table of the source and record the run, atomically.

    On a batch-check failure the run is recorded as failed (with its rejected rows) and the
    error re-raised; the source's tables are untouched. A batch the anomaly checks
    (warehouse/quarantine.py) distrust is kept for inspection and the run recorded as
    `quarantined`; the source's tables are untouched too.
    """
    run.rows_valid = sum(b.frame.height for b in batches)
    run.rejected.extend(r for b in batches for r in b.rejected)
    run.rows_rejected = len(run.rejected)
    last_good = burst.last_good.get(run.source) if burst is not None else quarantine.last_good_run(con, run.source)
    check_batch(run.source, run.rows_valid, last_good)
    verdict = quarantine.inspect(
        con, run.source, batches, last_good,
        has_offers=burst is None or burst.holds("offer_versions", run.source),
        has_medians=burst is None or burst.holds("source_gpu_medians", run.source),
    )
    if verdict.reasons:
        run.error = "quarantined: " + "; ".join(verdict.reasons)
        with transaction(con):
            quarantine.keep(con, run.run_id, run.source, run.provider, datetime.now(UTC), batches, verdict.reasons)
            _record(con, run, status="quarantined", burst=burst)
        return
    implausible = [r for before, after in zip(batches, verdict.batches, strict=True) for r in after.rejected[len(before.rejected):]]
    run.rejected.extend(implausible)
    run.rows_valid -= len(implausible)
    owned = [_without_foreign_keys(con, batch, run) for batch in verdict.batches]
    taken = [r for before, after in zip(verdict.batches, owned, strict=True) for r in after.rejected[len(before.rejected):]]
    run.rejected.extend(taken)
    run.rows_valid -= len(taken)
    run.rows_rejected = len(run.rejected)
    if run.capture is not None:
        run.captured_at = max((b.frame["scraped_at"].max() for b in batches if b.frame.height), default=None)
    _merge_and_record(con, run, owned, burst)


def _without_foreign_keys(con: duckdb.DuckDBPyConnection, batch: Validated, run: RunRecord) -> Validated:
    """The batch less the offers whose key another source of the provider holds current.

    An offer key names one offer of one provider: two sources writing it would leave two current
    rows (the merge closes only its own source's). Siblings (primary and fallbacks) are retired by
    the load itself, so their keys are free.
    """
    if batch.table != "offers" or not batch.frame.height:
        return batch
    free = siblings(run.source)
    held = {k: src for k, src in con.execute(query_sql("foreign_offer_keys"), {"provider": run.provider, "source": run.source}).fetchall() if src not in free}
    if not held:
        return batch
    clash = batch.frame["offer_id"].is_in(list(held))
    if not clash.any():
        return batch
    rejected = [Rejected("offers", (f"key_held_by_other_source: {held[row['offer_id']]} holds {row['offer_id']!r}",), row) for row in batch.frame.filter(clash).iter_rows(named=True)]
    return Validated(batch.table, batch.frame.filter(~clash), [*batch.rejected, *rejected])


def _merge_and_record(con: duckdb.DuckDBPyConnection, run: RunRecord, batches: Sequence[Validated], burst: Burst | None) -> None:
    with transaction(con):
        retire = sorted(siblings(run.source))
        if retire and any(b.table == "offers" and b.frame.height for b in batches):
            observed_at = max(b.frame["scraped_at"].max() for b in batches if b.table == "offers" and b.frame.height)
            con.execute(query_sql("retire_sibling_offers"), {"provider": run.provider, "siblings": retire, "observed_at": observed_at})
        for batch in batches:
            if batch.frame.height:
                merge_versions(con, batch, run, burst)
        _record(con, run, status="ok", burst=burst)


def accept_quarantined(con: duckdb.DuckDBPyConnection, run_id: str) -> RunRecord:
    """Load a quarantined batch deliberately, as a new `ok` run of its source that names the old one."""
    held = quarantine.read(con, run_id)
    run = RunRecord(run_id=uuid.uuid4().hex, source=held.source, provider=held.provider, started_at=datetime.now(UTC))
    run.rows_valid = sum(b.frame.height for b in held.batches)
    run.rows_fetched = run.rows_valid + sum(len(b.rejected) for b in held.batches)
    run.error = f"accepted quarantined run {run_id}"
    with transaction(con):
        for batch in held.batches:
            if batch.frame.height:
                merge_versions(con, batch, run)
        _record(con, run, status="ok")
        quarantine.mark_accepted(con, run_id, run.run_id, run.finished_at or datetime.now(UTC))
    return run


def record_failure(con: duckdb.DuckDBPyConnection, run: RunRecord, status: str, error: str, burst: Burst | None = None) -> None:
    """A failed or skipped source: one `scrape_runs` row (and any rejected rows), nothing else."""
    run.error = error
    run.rows_rejected = len(run.rejected)
    with transaction(con):
        _record(con, run, status=status, burst=burst)


def merge_versions(con: duckdb.DuckDBPyConnection, batch: Validated, run: RunRecord, burst: Burst | None = None) -> None:
    """Merge a validated batch into its versioned table (SCD2: history only on change).

    The source's current versions are read once into a plan (merge_plan.sql) that says what
    happens to each; the statements that apply it find their rows by rowid, so a load costs
    the source's current rows, not the table's history. Each statement gets exactly the
    parameters it names, and none depends on another having run first.
    """
    contract = CONTRACTS[batch.table]
    versions = VERSIONS_TABLE[batch.table]
    columns = contract.columns
    staged = batch.frame.with_columns(pl.Series("content_hash", content_hashes(batch.frame, columns), dtype=pl.String))
    observed_at = staged["scraped_at"].max()
    names = {
        "versions": versions,
        "key_match": " AND ".join(f"v.{k} IS NOT DISTINCT FROM s.{k}" for k in contract.key),
        "keys": ", ".join(f"v.{k}" for k in contract.key),
        "columns": ", ".join(columns),
        "staged_columns": ", ".join(f"s.{c}" for c in columns),
    }
    if burst is not None and not burst.holds(versions, run.source):  # nothing to plan against: every row is new
        with parquet_file(staged, "staged") as path:
            con.execute(query_sql("merge_insert_new").format(**names), {"run_id": run.run_id, "staged": path})
        _medians(con, batch, run, burst, observed_at)
        return
    kept = kept_keys(batch)
    # Most loads keep nothing: then no `kept` table is staged, and the plan reads an empty one.
    names["kept"] = "kept" if kept.height else "(SELECT * FROM staged WHERE false)"
    with staged_frame(con, "staged", staged), (staged_frame(con, "kept", kept) if kept.height else nullcontext()):
        [(planned,)] = con.execute(query_sql("merge_plan").format(**names), {"source": run.source, "delists": batch.table == "offers"}).fetchall()
        counts = {action: (n, inverted) for action, n, inverted in con.execute(query_sql("merge_plan_counts"), {"observed_at": observed_at}).fetchall()} if planned else {}
        inverted = sum(counts.get(action, (0, 0))[1] for action in ("close", "delist"))
        if inverted:  # raised inside the source's transaction: nothing of this load stays
            raise BatchRejected(
                f"{run.source}: a batch seen at {observed_at} would end {inverted} {batch.table} versions before they began "
                "(valid_to < valid_from); keeping the previous data"
            )
        if "delist" in counts:
            con.execute(query_sql("merge_delist"), {"observed_at": observed_at, "run_id": run.run_id})
        if "close" in counts or "delist" in counts:
            con.execute(query_sql("merge_close").format(**names), {"observed_at": observed_at})
        if "seen" in counts:
            con.execute(query_sql("merge_touch").format(**names), {"run_id": run.run_id})
        con.execute(query_sql("merge_insert").format(**names), {"run_id": run.run_id})
    _medians(con, batch, run, burst, observed_at)


def _medians(con: duckdb.DuckDBPyConnection, batch: Validated, run: RunRecord, burst: Burst | None, observed_at: datetime) -> None:
    if batch.table == "offers" and burst is not None:  # no later load of the burst reads this source's medians
        burst.medians.append((run.source, observed_at))
    elif batch.table == "offers":  # the quarantine's drift check reads the source's medians as of each load
        con.execute(query_sql("record_gpu_medians"), {"source": run.source, "observed_at": observed_at})


def kept_keys(batch: Validated) -> pl.DataFrame:
    """Keys of rows the source still lists but that failed validation this run (and no valid row has).

    Their offers keep their last good version: one bad value must not make an offer vanish.
    A rejected row without a full key (a parser's raw row) names no offer and keeps nothing.
    """
    contract = CONTRACTS[batch.table]
    schema = {k: v for k, v in contract.polars_schema().items() if k in contract.key}
    named = set()
    for rejected in batch.rejected:
        key = tuple(rejected.row.get(k) for k in contract.key)
        if rejected.table == batch.table and all(isinstance(v, _KEY_TYPES) for v in key):
            named.add(key)
    valid = set(batch.frame.select(contract.key).iter_rows()) if named and batch.frame.height else set()  # many batches name none
    keys = named - valid
    rows = [dict(zip(contract.key, key, strict=True)) for key in keys]
    try:
        return pl.DataFrame(rows, schema=schema, strict=False, orient="row") if rows else pl.DataFrame(schema=schema)
    except (pl.exceptions.PolarsError, TypeError, ValueError):
        return pl.DataFrame(schema=schema)  # keys of the wrong type match no stored offer anyway


def content_hashes(frame: pl.DataFrame, columns: Iterable[str]) -> list[str]:
    content = [c for c in columns if c not in VOLATILE]
    return [
        hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:32]
        for row in frame.select(content).iter_rows(named=True)
    ]


def _record(con: duckdb.DuckDBPyConnection, run: RunRecord, *, status: str, burst: Burst | None = None) -> None:
    run.status = status
    run.finished_at = run.finished_at or datetime.now(UTC)
    outcome = {
        "run_id": run.run_id,
        "flow_run_id": run.flow_run_id,
        "source": run.source,
        "provider": run.provider,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "status": status,
        "rows_fetched": run.rows_fetched,
        "rows_valid": run.rows_valid if status in ("ok", "quarantined") else 0,
        "rows_rejected": run.rows_rejected,
        "rows_skipped": run.rows_skipped,
        "pages": run.pages,
        "error": run.error,
        "capture": run.capture,
        "captured_at": run.captured_at,
    }
    if burst is not None:
        burst.outcomes.append(outcome)
        burst.rejected.append((run, list(run.rejected)))
        return
    [(finished,)] = con.execute(query_sql("finish_scrape_run"), outcome).fetchall()  # the run's start row gives way to its outcome
    if not finished:
        con.execute(query_sql("insert_scrape_run"), outcome)
    for first in range(0, len(run.rejected), REJECTED_CHUNK):
        _insert_rejected(con, [(run, r) for r in run.rejected[first : first + REJECTED_CHUNK]])


def _insert_rejected(con: duckdb.DuckDBPyConnection, chunk: Sequence[tuple[RunRecord, Rejected]]) -> None:
    frame = pl.DataFrame(
        {
            "run_id": [run.run_id for run, _ in chunk],
            "source": [run.source for run, _ in chunk],
            "provider": [run.provider for run, _ in chunk],
            "table_name": [r.table for _, r in chunk],
            "reasons": [list(r.reasons) for _, r in chunk],
            "row_json": [row_json(r.row) for _, r in chunk],
            "rejected_at": [run.finished_at for run, _ in chunk],
        },
        schema=_REJECTED_SCHEMA,
    )
    with staged_frame(con, "rejected_frame", frame):
        con.execute(query_sql("insert_rejected_rows"))


# Rejected rows are written this many at a time: a marketplace answer may reject tens of
# thousands of raw offers, and their JSON at once would cost hundreds of MB.
REJECTED_CHUNK = 1000
_REJECTED_SCHEMA = {
    "run_id": pl.String,
    "source": pl.String,
    "provider": pl.String,
    "table_name": pl.String,
    "reasons": pl.List(pl.String),
    "row_json": pl.String,
    "rejected_at": pl.Datetime(time_zone="UTC"),
}


_OUTCOME_SCHEMA = {
    "run_id": pl.String, "flow_run_id": pl.String, "source": pl.String, "provider": pl.String,
    "started_at": pl.Datetime(time_zone="UTC"), "finished_at": pl.Datetime(time_zone="UTC"), "status": pl.String,
    "rows_fetched": pl.Int64, "rows_valid": pl.Int64, "rows_rejected": pl.Int64, "rows_skipped": pl.Int64, "pages": pl.Int64,
    "error": pl.String, "capture": pl.String, "captured_at": pl.Datetime(time_zone="UTC"),
}  # fmt: skip


def record_run(con: duckdb.DuckDBPyConnection, run: RunRecord, *, status: str) -> None:
    """The `scrape_runs` row (and rejected rows) of a run, inside the caller's transaction."""
    _record(con, run, status=status)
