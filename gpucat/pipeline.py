"""The steps of refreshing one source, as plain functions: fetch, parse, validate, load.

The Prefect flow wires these into tasks; tests and `gpucat parse` call them directly.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pandera.polars as pa
import polars as pl

from schemas.errors import GpucatError, MissingApiKey, SourceError, UserInputError
from gpucat.memory.archs import MODEL_ARCHS_CSV
from gpucat.progress import report
from schemas.gpu_models import GpuModelRow
from schemas import egress_terms, storage_terms
from schemas import providers as provider_terms
from schemas.model_archs import ModelArchRow
from schemas.reference import GPU_MODELS_CSV
from schemas.validate import Validated, validate
from scrapers import all_sources
from schemas.records import ExchangeRate, Page, ParseItem, Rejected
from scrapers.base import Source, parse_pages
from scrapers.capture import CaptureWriter, ReplayTransport, find_entry
from schemas.redact import redact
from scrapers.http import Fetcher, make_client
from scrapers.normalize import NO_RATES, ExchangeRates, normalize
from warehouse import db
from warehouse.load import RunRecord, load_source, record_failure

# Reference tables every refresh reloads from the repo: table -> (CSV, its pandera model).
REFERENCE_TABLES: dict[str, tuple[Path, type[pa.DataFrameModel]]] = {
    "gpu_models": (GPU_MODELS_CSV, GpuModelRow),
    "model_archs": (MODEL_ARCHS_CSV, ModelArchRow),
    "providers": (provider_terms.CSV, provider_terms.ProviderTerms),
    "storage_terms": (storage_terms.CSV, storage_terms.StorageTerms),
    "egress_terms": (egress_terms.CSV, egress_terms.EgressTerms),
}

# DuckDB serializes writers anyway; one lock keeps concurrent sources from conflicting.
_WRITE_LOCK = threading.Lock()


@dataclass(frozen=True)
class FetchOptions:
    """Where responses come from and go: live, replayed from a capture dir, and/or recorded."""

    workdir: Path
    replay_dir: Path | None = None
    record_dir: Path | None = None


@dataclass(frozen=True)
class SourceBatch:
    """A source's validated output: one batch per table, and how many pages it came from."""

    batches: list[Validated]
    pages: int


def new_run(source: Source, flow_run_id: str | None = None) -> RunRecord:
    return RunRecord(
        run_id=uuid.uuid4().hex,
        source=source.name,
        provider=source.provider,
        started_at=datetime.now(UTC),
        flow_run_id=flow_run_id,
    )


@contextmanager
def secrets_redacted() -> Iterator[None]:
    """An exception leaving a step carries no secret: Prefect logs it and stores it in its database.

    When the message (or one it chains to) holds a key or a secret recognizable by name, the
    same kind of error is raised again with the redacted message and without the chain.
    """
    try:
        yield
    except Exception as exc:
        secrets = known_secrets()
        chain = [exc, *_chained(exc)]
        if all(redact(str(e), secrets) == str(e) for e in chain):
            raise
        message = redact(str(exc), secrets)
        try:
            clean = type(exc)(message) if isinstance(exc, GpucatError) else SourceError(f"{type(exc).__name__}: {message}")
        except TypeError:  # an error whose constructor takes more than a message
            clean = SourceError(f"{type(exc).__name__}: {message}")
        raise clean from None


def _chained(exc: BaseException) -> Iterator[BaseException]:
    seen = {id(exc)}
    while (exc := exc.__cause__ or exc.__context__) is not None and id(exc) not in seen:  # type: ignore[assignment]
        seen.add(id(exc))
        yield exc


@secrets_redacted()
def fetch_source(source: Source, options: FetchOptions, env: Mapping[str, str] = os.environ) -> list[Page]:
    report(source.name, "fetching")
    transport = ReplayTransport(options.replay_dir) if options.replay_dir else None
    capture = CaptureWriter(options.record_dir) if options.record_dir else None
    with make_client(source, transport) as client:
        # A replay needs no key: the captured responses already hold what the key bought.
        fetcher = Fetcher(source, client, workdir=options.workdir, capture=capture, env=env, require_api_key=transport is None)
        return list(source.fetch(fetcher))


@secrets_redacted()
def parse_source(source: Source, pages: Sequence[Page], rates: ExchangeRates = NO_RATES) -> list[ParseItem]:
    """Parse every page, run the source's batch pass, then normalize (GPU names, USD with `rates`)."""
    report(source.name, "parsing")
    return list(normalize(parse_pages(source, pages), rates))


def exchange_rates(con: duckdb.DuckDBPyConnection) -> dict[str, ExchangeRate]:
    """The latest loaded rate of every currency, to normalize prices quoted in it."""
    with con.cursor() as cursor:
        rows = cursor.execute(db.query_sql("exchange_rates")).fetchall()
    return {row[0]: ExchangeRate(*row) for row in rows}


def phases(sources: Sequence[Source]) -> list[list[Source]]:
    """Sources in load order: those others' normalization reads (`loads_first`), then the rest."""
    first = [s for s in sources if s.loads_first]
    rest = [s for s in sources if not s.loads_first]
    return [phase for phase in (first, rest) if phase]


@secrets_redacted()
def validate_source(source: Source, items: Sequence[ParseItem], pages: int) -> SourceBatch:
    """One validated batch per table the source fills; rejections from parsing ride along."""
    report(source.name, "validating")
    earlier = [item for item in items if isinstance(item, Rejected)]
    batches = []
    for table in source.tables:
        records = [item for item in items if not isinstance(item, Rejected) and item.table == table]
        batch = validate(table, records)
        batches.append(Validated(table, batch.frame, [r for r in earlier if r.table == table] + batch.rejected))
    stray = [r for r in earlier if r.table not in source.tables]
    batches[0].rejected.extend(stray)
    return SourceBatch(batches, pages)


@secrets_redacted()
def load_batches(con: duckdb.DuckDBPyConnection, run: RunRecord, batch: SourceBatch) -> RunRecord:
    """Batch checks and the atomic load; on failure `run` keeps the rejected rows for the record."""
    report(run.source, "loading")
    run.pages = batch.pages
    run.rows_fetched = sum(b.frame.height + len(b.rejected) for b in batch.batches)
    with _WRITE_LOCK:
        load_source(con, run, batch.batches)
    report(run.source, run.status, run.error if run.status == "quarantined" else f"{run.rows_valid} rows, {run.rows_rejected} rejected")
    return run


def record_outcome(con: duckdb.DuckDBPyConnection, run: RunRecord, error: BaseException) -> RunRecord:
    """A source that failed, or was skipped for a missing key, gets its scrape_runs row."""
    if isinstance(error, MissingApiKey):
        status, message = "skipped", f"missing API key: {error.env_var} is not set"
    else:
        status, message = "failed", f"{type(error).__name__}: {error}"
    message = redact(message, known_secrets())
    with _WRITE_LOCK:
        record_failure(con, run, status, message)
    report(run.source, status, message)
    return run


def refresh_source(
    con: duckdb.DuckDBPyConnection, source: Source, options: FetchOptions, flow_run_id: str | None = None, rates: ExchangeRates = NO_RATES
) -> RunRecord:
    """One source's whole chain, fetch -> parse -> validate -> load; a failure is recorded, never raised."""
    run = new_run(source, flow_run_id)
    try:
        pages = fetch_source(source, options)
        batch = validate_source(source, parse_source(source, pages, rates), len(pages))
        with con.cursor() as cursor:  # a DuckDB connection is not shared across threads; a cursor is
            return load_batches(cursor, run, batch)
    except Exception as exc:  # noqa: BLE001 - any failure of one source is recorded, the others go on
        with con.cursor() as cursor:
            return record_outcome(cursor, run, exc)


def refresh_sources(con: duckdb.DuckDBPyConnection, sources: Sequence[Source], options: FetchOptions, max_workers: int = 4) -> list[RunRecord]:
    """Every source's chain, concurrently, in this process (no Prefect): the same steps the flow wires."""
    from concurrent.futures import ThreadPoolExecutor

    load_reference(con)
    runs: list[RunRecord] = []
    for phase in phases(sources):
        rates = exchange_rates(con)
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            runs.extend(pool.map(lambda source: refresh_source(con, source, options, rates=rates), phase))
    return runs


def refresh_catalog(db: str | Path | None, sources: Sequence[Source], *, replay_dir: Path | None = None, record_dir: Path | None = None) -> list[RunRecord]:
    """A whole refresh in this process: open the warehouse, run every source's chain, close it."""
    import tempfile

    from warehouse.db import connect

    con = connect(db)
    try:
        with tempfile.TemporaryDirectory(prefix="gpucat-") as workdir:
            options = FetchOptions(workdir=Path(workdir), replay_dir=replay_dir, record_dir=record_dir)
            return refresh_sources(con, sources, options)
    finally:
        con.close()


def summary_row(run: RunRecord) -> dict[str, object]:
    """What a refresh reports per source (the CLI's table and --json, the flow's artifact)."""
    duration = (run.finished_at - run.started_at).total_seconds() if run.finished_at else None
    return {
        "source": run.source,
        "status": run.status,
        "rows_fetched": run.rows_fetched,
        "rows_valid": run.rows_valid,
        "rows_rejected": run.rows_rejected,
        "duration_s": round(duration, 2) if duration is not None else None,
        "error": run.error,
    }


def refresh_outcome(summary: Sequence[dict[str, object]]) -> tuple[bool, str]:
    """Whether a refresh succeeded (no source failed), and its one-line message."""
    failed = [str(row["source"]) for row in summary if row["status"] == "failed"]
    held = [str(row["source"]) for row in summary if row["status"] == "quarantined"]
    note = f"; quarantined (see gpucat status): {', '.join(held)}" if held else ""
    if failed:
        return False, f"{len(failed)} of {len(summary)} sources failed: {', '.join(failed)}{note}"
    return True, f"{len(summary)} sources refreshed{note}"


def known_secrets(env: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """Values of every API-key variable a source declares, to scrub from anything stored."""
    names = {s.api_key_env for s in all_sources().values() if s.api_key_env}
    return tuple(env[n] for n in sorted(names) if env.get(n))


def pages_from_files(paths: Sequence[Path]) -> list[Page]:
    """Saved bodies as pages: URL and fetch time from their capture manifest when there is one."""
    pages = []
    for path in paths:
        if not path.is_file():
            raise UserInputError(f"cannot read {path}: no such file")
        entry = find_entry(path)
        if entry is not None:
            pages.append(Page(url=entry.url, fetched_at=entry.fetched_at, path=path))
        else:
            mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            pages.append(Page(url=path.resolve().as_uri(), fetched_at=mtime, path=path))
    return pages


def load_reference(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Validate every reference CSV against its model, then replace the tables in one transaction."""
    frames = {table: model.validate(pl.read_csv(path, infer_schema_length=None)) for table, (path, model) in REFERENCE_TABLES.items()}
    return db.load_reference(con, frames)
