"""The steps of refreshing one source, as plain functions: fetch, parse, validate, load.

The Prefect flow wires these into tasks; tests and `gpucat parse` call them directly.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pandera.polars as pa

from gpucat.schemas.errors import DatabaseBusy, GpucatError, MissingApiKey, PrimaryLoaded, SourceError, UserInputError
from gpucat import schedules
from gpucat.schedules import schedules_frame
from gpucat.memory.archs import MODEL_ARCHS_CSV
from gpucat.progress import report
from gpucat.schemas.gpu_models import GpuModelRow
from gpucat.schemas import egress_terms, null_reasons, storage_terms
from gpucat.schemas import providers as provider_terms
from gpucat.schemas.model_archs import ModelArchRow
from gpucat.schemas.reference import GPU_MODELS_CSV
from gpucat.schemas.validate import Validated, validate, validate_each
from gpucat.scrapers import all_sources
from gpucat.schemas.records import ExchangeRate, Page, ParseItem, Rejected, Skipped
from gpucat.scrapers.base import Source, parse_pages
from gpucat.scrapers.capture import CaptureWriter, ReplayTransport, find_entry
from gpucat.scrapers.conditional import SourceUnchanged, Validators
from gpucat.schemas.redact import redact, redact_value
from gpucat.scrapers.http import Fetcher, make_client
from gpucat.scrapers.normalize import NO_RATES, ExchangeRates, normalize
from gpucat.warehouse import db, reference, validators
from gpucat.warehouse import runs as runs_log
from gpucat.warehouse.load import RunRecord, load_source, record_failure

# Reference tables every refresh reloads from the repo: table -> (CSV, its pandera model).
# The reviewed terms rows load into reviewed_*; the storage_terms / egress_terms views merge them
# with what the terms sources scraped (migration 070), which a reload leaves alone.
REFERENCE_TABLES: dict[str, tuple[Path, type[pa.DataFrameModel]]] = {
    "gpu_models": (GPU_MODELS_CSV, GpuModelRow),
    "model_archs": (MODEL_ARCHS_CSV, ModelArchRow),
    "providers": (provider_terms.CSV, provider_terms.ProviderTerms),
    "reviewed_storage_terms": (storage_terms.CSV, storage_terms.StorageTerms),
    "reviewed_egress_terms": (egress_terms.CSV, egress_terms.EgressTerms),
    "terms_null_reasons": (null_reasons.CSV, null_reasons.NullReasons),
}

# DuckDB serializes writers anyway; one lock keeps concurrent sources from conflicting
# (re-entrant: a `db.Writer` write already holds its own turn).
_WRITE_LOCK = threading.RLock()


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
    skipped: int = 0  # rows the parser set aside as out of scope (`Skipped`), counted only


def new_run(source: Source, flow_run_id: str | None = None, replay_dir: Path | None = None) -> RunRecord:
    """A run of `source`; with `replay_dir` it is recorded as a replay of that capture."""
    return RunRecord(
        run_id=uuid.uuid4().hex,
        source=source.name,
        provider=source.provider,
        started_at=datetime.now(UTC),
        flow_run_id=flow_run_id,
        capture=str(replay_dir) if replay_dir is not None else None,
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
    return fetch_source_since(source, options, None, env)[0]


def fetch_source_since(
    source: Source, options: FetchOptions, previous: Validators | None, env: Mapping[str, str] = os.environ
) -> tuple[list[Page], Validators | None]:
    """The pages and this run's validators; raises `SourceUnchanged` when `previous` proves nothing changed."""
    report(source.name, "fetching")
    transport = ReplayTransport(options.replay_dir, options.replay_dir / source.provider / source.name) if options.replay_dir else None
    capture = CaptureWriter(options.record_dir) if options.record_dir else None
    with make_client(source, transport) as client:
        # A replay needs no key: the captured responses already hold what the key bought.
        fetcher = Fetcher(
            source, client, workdir=options.workdir, capture=capture, env=env, require_api_key=transport is None, previous=previous
        )
        pages = list(source.fetch(fetcher))
        return pages, fetcher.validators


@secrets_redacted()
def parse_source(source: Source, pages: Sequence[Page], rates: ExchangeRates = NO_RATES) -> list[ParseItem]:
    """Parse every page, run the source's batch pass, then normalize (GPU names, USD with `rates`)."""
    report(source.name, "parsing")
    return list(normalize(parse_pages(source, pages), rates))


def rate_warnings(items: Sequence[ParseItem]) -> list[str]:
    """One line per exchange-rate reason offers were rejected for, with how many (what `parse --db` warns)."""
    counts: dict[str, int] = {}
    for item in items:
        if isinstance(item, Rejected):
            for reason in item.reasons:
                if reason.startswith(("stale_exchange_rate", "no_exchange_rate")):
                    counts[reason] = counts.get(reason, 0) + 1
    return [f"{reason} ({n} row{'s' if n != 1 else ''})" for reason, n in counts.items()]


def exchange_rates(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[ExchangeRate, ...]]:
    """Every loaded rate of every currency, by day: each offer converts with the rate of its own day."""
    with con.cursor() as cursor:
        rows = cursor.execute(db.query_sql("exchange_rates")).fetchall()
    by_currency: dict[str, list[ExchangeRate]] = {}
    for row in rows:
        by_currency.setdefault(row[0], []).append(ExchangeRate(*row))
    return {currency: tuple(rates) for currency, rates in by_currency.items()}


def phases(sources: Sequence[Source]) -> list[list[Source]]:
    """Sources in load order: those others' normalization reads (`loads_first`), then the rest,
    then the fallbacks, which run only once their primaries' outcome is known (`needless_fallbacks`)."""
    first = [s for s in sources if s.loads_first]
    rest = [s for s in sources if not s.loads_first and s.fallback_for is None]
    fallbacks = [s for s in sources if not s.loads_first and s.fallback_for is not None]
    return [phase for phase in (first, rest, fallbacks) if phase]


# A primary whose latest run ended so holds data of its own (a quarantined batch leaves its last
# good rows current): its fallback would be a second truth.
_PRIMARY_HOLDS = ("ok", "unchanged", "quarantined")


def needless_fallbacks(writer: db.Writer, phase: Sequence[Source], runs: Mapping[str, RunRecord]) -> dict[str, PrimaryLoaded]:
    """The fallbacks of `phase` not to run, each with why: their primary's latest run, this
    refresh's when it ran here, else the warehouse's, holds data. A fallback runs only when its
    primary was skipped or failed (or never ran)."""
    out: dict[str, PrimaryLoaded] = {}
    unknown = [s for s in phase if s.fallback_for is not None and s.fallback_for not in runs]
    stored: dict[str, str | None] = {}
    if unknown:
        with writer.open() as con, con.cursor() as cursor:
            for s in unknown:
                row = cursor.execute(db.query_sql("last_run_status"), {"source": s.fallback_for}).fetchone()
                stored[s.name] = row[0] if row else None
    for s in phase:
        if s.fallback_for is None:
            continue
        status = runs[s.fallback_for].status if s.fallback_for in runs else stored.get(s.name)
        if status in _PRIMARY_HOLDS:
            out[s.name] = PrimaryLoaded(s.fallback_for, str(status))
    return out


def with_prerequisites(sources: Sequence[Source], rates: ExchangeRates) -> list[Source]:
    """The sources, plus every `loads_first` source when the warehouse holds no rates yet.

    A scheduled group without the rates source would otherwise reject every non-USD price of
    its first run on a new warehouse (`gpucat serve` runs ask for this).
    """
    if rates:
        return list(sources)
    names = {s.name for s in sources}
    return [s for s in all_sources().values() if s.loads_first and s.name not in names] + list(sources)


@secrets_redacted()
def validate_source(source: Source, items: Sequence[ParseItem], pages: int) -> SourceBatch:
    """One validated batch per table the source fills; rejections from parsing ride along."""
    report(source.name, "validating")
    return _source_batch(source, items, pages, {table: validate(table, _records(items, table)) for table in source.tables})


def validate_sources(parsed: Sequence[tuple[Source, Sequence[ParseItem], int]]) -> list[SourceBatch | Exception]:
    """`validate_source` of every (source, items, pages), with one pandera pass per table for all.

    Each source gets exactly the batch (or the error) `validate_source` would give it alone;
    a source whose batch fails as a whole fails by itself (schemas.validate.validate_each).
    """
    for source, _, _ in parsed:
        report(source.name, "validating")
    tables = list(dict.fromkeys(table for source, _, _ in parsed for table in source.tables))
    checked: list[dict[str, Validated | Exception]] = [{} for _ in parsed]
    for table in tables:
        fill = [n for n, (source, _, _) in enumerate(parsed) if table in source.tables]
        results = validate_each(table, [_records(parsed[n][1], table) for n in fill])
        for n, result in zip(fill, results, strict=True):
            checked[n][table] = result
    out: list[SourceBatch | Exception] = []
    for (source, items, pages), results in zip(parsed, checked, strict=True):
        try:
            with secrets_redacted():
                error = next((results[t] for t in source.tables if isinstance(results[t], Exception)), None)
                if error is not None:
                    raise error
                out.append(_source_batch(source, items, pages, results))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - one source's failure is its own
            out.append(exc)
    return out


def _records(items: Sequence[ParseItem], table: str) -> list[ParseItem]:
    return [item for item in items if not isinstance(item, (Rejected, Skipped)) and item.table == table]


def _source_batch(source: Source, items: Sequence[ParseItem], pages: int, validated: Mapping[str, Validated]) -> SourceBatch:
    earlier = [item for item in items if isinstance(item, Rejected)]
    batches = [Validated(table, validated[table].frame, _scrubbed([r for r in earlier if r.table == table] + validated[table].rejected))
               for table in source.tables]  # fmt: skip
    stray = [r for r in earlier if r.table not in source.tables]
    batches[0].rejected.extend(_scrubbed(stray))
    return SourceBatch(batches, pages, skipped=sum(item.count for item in items if isinstance(item, Skipped)))


def _scrubbed(rejected: list[Rejected]) -> list[Rejected]:
    """Rejected rows hold values as the parser decoded them (a JSON-escaped key comes out whole),
    so known keys are redacted from the decoded row before it is stored."""
    secrets = known_secrets()
    if not secrets:
        return rejected
    return [Rejected(r.table, tuple(redact(x, secrets) for x in r.reasons), redact_value(r.row, secrets)) for r in rejected]


@secrets_redacted()
def load_batches(con: duckdb.DuckDBPyConnection, run: RunRecord, batch: SourceBatch) -> RunRecord:
    """Batch checks and the atomic load; on failure `run` keeps the rejected rows for the record."""
    report(run.source, "loading")
    run.pages = batch.pages
    run.rows_fetched = sum(b.frame.height + len(b.rejected) for b in batch.batches)
    run.rows_skipped = batch.skipped
    with _WRITE_LOCK:
        load_source(con, run, batch.batches)
    report(run.source, run.status, run.error if run.status == "quarantined" else f"{run.rows_valid} rows, {run.rows_rejected} rejected")
    return run


def record_outcome(con: duckdb.DuckDBPyConnection, run: RunRecord, error: BaseException) -> RunRecord:
    """A source that failed, or was skipped for a missing key, gets its scrape_runs row."""
    if isinstance(error, MissingApiKey):
        status, message = "skipped", f"missing API key: {error.env_var} is not set"
    elif isinstance(error, PrimaryLoaded):
        status, message = "skipped", str(error)
    else:
        status, message = "failed", f"{type(error).__name__}: {error}"
    message = redact(message, known_secrets())
    with _WRITE_LOCK:
        record_failure(con, run, status, message)
    report(run.source, status, message)
    return run


def record_unchanged(con: duckdb.DuckDBPyConnection, run: RunRecord, source: Source, unchanged: SourceUnchanged) -> RunRecord:
    """A source the provider says is unchanged: no parse, its rows stay current and count as seen now."""
    if run.capture is not None:
        run.captured_at = unchanged.checked_at
    with _WRITE_LOCK:
        validators.record_unchanged(con, run, source.tables, unchanged.checked_at)
    report(run.source, "unchanged", str(unchanged))
    return run


@dataclass
class Prepared:
    """A source fetched and parsed with the warehouse closed: everything its load needs.

    Exactly one of `items` (parsed), `unchanged` (the provider said so) or `error` is set.
    """

    source: Source
    run: RunRecord
    items: list[ParseItem] | None = None
    pages: int = 0
    seen: Validators | None = None  # this fetch's validators, stored once the load is ok
    unchanged: SourceUnchanged | None = None
    error: BaseException | None = None


def prepare_source(source: Source, options: FetchOptions, previous: Validators | None, rates: ExchangeRates = NO_RATES, run: RunRecord | None = None) -> Prepared:
    """Fetch and parse one source; never opens the warehouse, never raises (a failure rides along)."""
    run = run or new_run(source, replay_dir=options.replay_dir)
    try:
        pages, seen = fetch_source_since(source, options, previous)
    except SourceUnchanged as unchanged:
        return Prepared(source, run, unchanged=unchanged)
    except Exception as exc:  # noqa: BLE001 - any failure of one source is recorded, the others go on
        return Prepared(source, run, error=exc)
    try:
        return Prepared(source, run, items=parse_source(source, pages, rates), pages=len(pages), seen=seen)
    except Exception as exc:  # noqa: BLE001
        return Prepared(source, run, error=exc)


def load_prepared(writer: db.Writer, ready: Sequence[Prepared], *, read_rates: bool = False) -> tuple[list[RunRecord], dict[str, tuple[ExchangeRate, ...]] | None]:
    """Validate the ready sources together, then load them in one opening of the warehouse.

    Validation runs before the file opens. Each source still loads (or records its failure or
    its `unchanged` run) in its own transaction, as `load_source` promises, and the validators
    of the sources that loaded are stored in one more. With `read_rates`, the exchange rates as
    they stand after these loads come back too. When the file cannot be opened, every run
    says why it was not recorded.
    """
    parsed = [p for p in ready if p.items is not None]
    batches = dict(zip(map(id, parsed), validate_sources([(p.source, p.items or [], p.pages) for p in parsed]), strict=True))
    runs: list[RunRecord] = []
    rates = None
    try:
        with writer.open() as con:
            seen: list[tuple[str, Validators, str]] = []
            for p in ready:
                runs.append(_load_one(con, p, batches.get(id(p))))
                if p.seen is not None and p.run.status == "ok":
                    seen.append((p.source.name, p.seen, p.run.run_id))
            with _WRITE_LOCK:
                validators.save_all(con, seen)
            if read_rates:
                rates = exchange_rates(con)
    except DatabaseBusy as busy:
        for p in ready[len(runs):]:
            batch = batches.get(id(p))
            runs.append(_not_recorded(p.run, p.error or (batch if isinstance(batch, Exception) else busy), busy))
    return runs, rates


def _load_one(con: duckdb.DuckDBPyConnection, prepared: Prepared, batch: SourceBatch | Exception | None) -> RunRecord:
    run = prepared.run
    try:
        if prepared.unchanged is not None:
            return record_unchanged(con, run, prepared.source, prepared.unchanged)
        if prepared.error is not None:
            raise prepared.error
        if isinstance(batch, Exception):
            raise batch
        assert batch is not None
        return load_batches(con, run, batch)
    except Exception as exc:  # noqa: BLE001 - any failure of one source is recorded, the others go on
        return record_outcome(con, run, exc)


def refresh_source(
    warehouse: db.Writer | duckdb.DuckDBPyConnection,
    source: Source,
    options: FetchOptions,
    flow_run_id: str | None = None,
    rates: ExchangeRates = NO_RATES,
) -> RunRecord:
    """One source's whole chain, fetch -> parse -> validate -> load; a failure is recorded, never raised.

    Only short writes open the warehouse (the validators read, then the load with the
    validators' save), so a slow fetch locks out no reader.
    """
    writer = db.Writer.of(warehouse)
    run = new_run(source, flow_run_id, options.replay_dir)
    try:
        previous = None
        if options.record_dir is None:  # a recording fetches in full: a capture must hold every body
            with writer.open() as con:
                previous = validators.load_all(con).get(source.name)
    except Exception as exc:  # noqa: BLE001
        return record_outcome_in(writer, run, exc)
    return load_prepared(writer, [prepare_source(source, options, previous, rates, run)])[0][0]


def record_outcome_in(writer: db.Writer, run: RunRecord, error: BaseException) -> RunRecord:
    """`record_outcome` in its own short write; if even that cannot open the file, the run says why."""
    try:
        with writer.open() as con:
            return record_outcome(con, run, error)
    except DatabaseBusy as busy:
        return _not_recorded(run, error, busy)


def _not_recorded(run: RunRecord, error: BaseException, busy: DatabaseBusy) -> RunRecord:
    run.status, run.error = "failed", redact(f"{type(error).__name__}: {error}; not recorded: {busy}", known_secrets())
    run.finished_at = run.finished_at or datetime.now(UTC)
    report(run.source, "failed", run.error)
    return run


def refresh_sources(
    warehouse: db.Writer | duckdb.DuckDBPyConnection, sources: Sequence[Source], options: FetchOptions, max_workers: int = 4
) -> list[RunRecord]:
    """Every source's chain in this process (no Prefect): the same steps the flow wires.

    Sources fetch and parse concurrently with the warehouse closed. Whatever is ready is then
    validated together and loaded in one opening of the file (each source in its own
    transaction), which closes again until more is ready: a refresh opens the file a few times,
    not a few times per source, and readers get in between those bursts.
    """
    writer = db.Writer.of(warehouse)
    started = {source.name: new_run(source, replay_dir=options.replay_dir) for source in sources}
    with writer.open() as con:
        load_reference(con)
        with db.transaction(con):  # a refresh killed from here on leaves `running` rows the next one marks
            runs_log.interrupt_dead_runs(con, datetime.now(UTC))
            runs_log.start_runs(con, started.values())
        previous = validators.load_all(con) if options.record_dir is None else {}  # a recording fetches in full
        rates = exchange_rates(con)
    runs: dict[str, RunRecord] = {}
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        for phase in phases(sources):
            order = {source.name: n for n, source in enumerate(phase)}
            needless = needless_fallbacks(writer, phase, runs)
            if needless:
                loaded, _ = load_prepared(writer, [Prepared(s, started[s.name], error=needless[s.name]) for s in phase if s.name in needless])
                runs.update((run.source, run) for run in loaded)
            pending = {pool.submit(prepare_source, source, options, previous.get(source.name), rates, started[source.name])
                       for source in phase if source.name not in needless}  # fmt: skip
            while pending:
                done, pending = _gather(pending)
                ready = sorted((f.result() for f in done), key=lambda p: order[p.source.name])  # a burst loads in a stable order
                loaded, now = load_prepared(writer, ready, read_rates=not pending)
                runs.update((run.source, run) for run in loaded)
                rates = now if now is not None else rates
    return [runs[source.name] for phase in phases(sources) for source in phase]


# A burst waits for sources that finish close behind the first: replayed sources finish within
# milliseconds of each other and load in one burst; live ones, seconds apart, each in their own.
GATHER_GAP_S = 0.05
GATHER_MAX_S = 1.0


def _gather(pending: set[Future[Prepared]]) -> tuple[set[Future[Prepared]], set[Future[Prepared]]]:
    """(done, still pending): at least one finished preparation, and those that finish soon after it."""
    done, pending = wait(pending, return_when=FIRST_COMPLETED)
    deadline = time.monotonic() + GATHER_MAX_S
    while pending and time.monotonic() < deadline:
        more, pending = wait(pending, timeout=GATHER_GAP_S, return_when=FIRST_COMPLETED)
        if not more:
            break
        done |= more
    return done, pending


def refresh_catalog(db_file: str | Path | None, sources: Sequence[Source], *, replay_dir: Path | None = None, record_dir: Path | None = None) -> list[RunRecord]:
    """A whole refresh in this process; the warehouse is open only while each source loads."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gpucat-") as workdir:
        options = FetchOptions(workdir=Path(workdir), replay_dir=replay_dir, record_dir=record_dir)
        return refresh_sources(db.Writer(db_file), sources, options)


def summary_row(run: RunRecord) -> dict[str, object]:
    """What a refresh reports per source (the CLI's table and --json, the flow's artifact)."""
    duration = (run.finished_at - run.started_at).total_seconds() if run.finished_at else None
    return {
        "source": run.source,
        "status": run.status,
        "rows_fetched": run.rows_fetched,
        "rows_valid": run.rows_valid,
        "rows_rejected": run.rows_rejected,
        "rows_skipped": run.rows_skipped,
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
    """Validate every reference CSV against its model, then replace the tables (and the sources'
    freshness budgets) in one transaction: only those whose file or code changed since they were
    last loaded (warehouse/reference.py). Returns the rows written per table."""
    tables = {table: reference.csv_reference(path, model) for table, (path, model) in REFERENCE_TABLES.items()}
    budgets = reference.digest(schedules.config_path(), Path(schedules.__file__), ",".join(sorted(all_sources())))
    tables["source_schedules"] = reference.Reference(budgets, schedules_frame)  # freshness budgets, from the schedules file
    return db.load_changed_reference(con, tables)
