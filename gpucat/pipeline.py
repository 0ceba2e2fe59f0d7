"""One refresh, one orchestrator: `refresh_sources` runs it, and every runner wraps that function.

A refresh is three steps, each one function here:

- `start_refresh`: in one opening of the warehouse, the reference data, the prerequisites (the
  rate sources, while the warehouse holds no rates), each run's `running` row, the last good
  runs' fetch tokens and the exchange rates;
- `prepare_source`: one source fetched (conditionally) and parsed, with the warehouse closed,
  its records streamed into frames a chunk at a time (`Collected`), so it holds its batch, not a
  record object per offer;
- `load_prepared`: a burst of ready sources validated together, then loaded in one opening of
  the warehouse and one commit, each source all or nothing (quarantine included; `_write_burst`);
  the fallbacks waiting on those sources are settled in the same opening.

`refresh_sources` sequences them: rate sources first, the others converting with the rates just
loaded, a fallback only once its primary's outcome is known. A `Steps` says where each step
runs: here by default (`gpucat refresh`, preparations on a thread pool); the Prefect flow makes
each a task (flows/refresh.py), and its Dask runner sends the preparations to workers.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import pandera.polars as pa

from gpucat import schedules as schedules_file
from gpucat.memory.archs import MODEL_ARCHS_CSV
from gpucat.progress import report
from gpucat.schedules import schedules_frame
from gpucat.schemas import egress_terms, null_reasons, storage_terms
from gpucat.schemas import providers as provider_terms
from gpucat.schemas.errors import DatabaseBusy, GpucatError, MissingApiKey, PrimaryLoaded, SourceError, UserInputError
from gpucat.schemas.gpu_models import GpuModelRow
from gpucat.schemas.model_archs import ModelArchRow
from gpucat.schemas.records import ExchangeRate, Page, ParseItem, Rejected, RowText
from gpucat.schemas.redact import redact, redact_value
from gpucat.schemas.reference import GPU_MODELS_CSV
from gpucat.schemas.settings import Settings
from gpucat.schemas.validate import Collected, Validated, collect, validate_each
from gpucat.scrapers import all_sources
from gpucat.scrapers.base import Source, parse_pages, stream_pages
from gpucat.scrapers.capture import CaptureWriter, ReplayTransport, find_entry
from gpucat.scrapers.conditional import FetchTokens, SourceUnchanged
from gpucat.scrapers.http import Fetcher, make_client
from gpucat.scrapers.normalize import NO_RATES, ExchangeRates, normalize
from gpucat.warehouse import db, fetch_tokens, reference
from gpucat.warehouse import runs as runs_log
from gpucat.warehouse.load import Burst, RunRecord, load_source, record_failure

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

@dataclass(frozen=True)
class FetchOptions:
    """Where responses come from and go: live, replayed from a capture dir, and/or recorded."""

    workdir: Path
    replay_dir: Path | None = None
    record_dir: Path | None = None
    settings: Settings = field(default_factory=Settings)  # read by the runner at its start (retries, AWS regions)
    reference_cache: Path | None = None  # where validated reference CSVs are kept for the next new warehouse (reference.py)


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


@dataclass(frozen=True)
class Fetched:
    """A source's pages, and the tokens that make its next fetch conditional (stored once it loads)."""

    pages: list[Page]
    tokens: FetchTokens | None = None


@secrets_redacted()
def fetch_source(source: Source, options: FetchOptions, previous: FetchTokens | None = None, env: Mapping[str, str] = os.environ) -> Fetched:
    """Every page of the source's fetch walk; raises `SourceUnchanged` when `previous` proves nothing changed."""
    report(source.name, "fetching")
    transport = ReplayTransport(options.replay_dir, options.replay_dir / source.provider / source.name) if options.replay_dir else None
    capture = CaptureWriter(options.record_dir) if options.record_dir else None
    with make_client(source, transport) as client:
        # A replay needs no key: the captured responses already hold what the key bought.
        fetcher = Fetcher(
            source, client, workdir=options.workdir, capture=capture, env=env, require_api_key=transport is None, previous=previous,
            settings=options.settings,
        )
        pages = list(source.fetch(fetcher))
        return Fetched(pages, fetcher.tokens)


@secrets_redacted()
def parse_source(source: Source, pages: Sequence[Page], rates: ExchangeRates = NO_RATES, *, processes: int | None = None) -> list[ParseItem]:
    """Parse every page, run the source's batch pass, then normalize (GPU names, USD with `rates`).
    `processes`: how many may scan one large file (`Settings.parse_processes`)."""
    report(source.name, "parsing")
    return list(normalize(parse_pages(source, pages, processes=processes), rates))


@secrets_redacted()
def collect_source(
    source: Source, pages: Sequence[Page], rates: ExchangeRates = NO_RATES, *, processes: int | None = None
) -> Collected:
    """`parse_source`, held compactly as it streams (`schemas.validate.collect`): what a refresh
    keeps of a source until its load, so its memory grows with the batch, not the market. Rows
    rejected while parsing are scrubbed of known keys as they come."""
    report(source.name, "parsing")
    secrets = known_secrets()
    items = normalize(stream_pages(source, pages, processes=processes), rates)
    return collect(items, partial(_scrubbed_one, secrets=secrets)) if secrets else collect(items)


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
    then the fallbacks, which run only once their primaries' outcome is known."""
    first = [s for s in sources if s.loads_first]
    rest = [s for s in sources if not s.loads_first and s.fallback_for is None]
    fallbacks = [s for s in sources if not s.loads_first and s.fallback_for is not None]
    return [phase for phase in (first, rest, fallbacks) if phase]


def with_prerequisites(sources: Sequence[Source], rates: ExchangeRates) -> list[Source]:
    """The sources, plus every `loads_first` source when the warehouse holds no rates yet: a first
    refresh of a non-USD source alone would otherwise reject every price it converts."""
    if rates:
        return list(sources)
    names = {s.name for s in sources}
    return [s for s in all_sources().values() if s.loads_first and s.name not in names] + list(sources)


# A primary whose latest run ended so holds data of its own (a quarantined batch leaves its last
# good rows current): its fallback would be a second truth, and is skipped unfetched.
_PRIMARY_HOLDS = ("ok", "unchanged", "quarantined")


# What preparing a source came to: exactly one of `Parsed`, `Unchanged` or `Failed` (`Outcome`).
# Plain data, so an outcome crosses a process boundary (a Dask worker) whatever went wrong.
@dataclass(frozen=True)
class Parsed:
    items: Collected | Sequence[ParseItem]  # a refresh's are `Collected` (prepare_source); a list is collected when validated
    pages: int
    tokens: FetchTokens | None = None  # stored once the load is ok


@dataclass(frozen=True)
class Unchanged:
    """The provider said nothing changed since the last good run: no parse, its rows stay current."""

    reason: str
    checked_at: datetime


@dataclass(frozen=True)
class Failed:
    """A source that will not load: `skipped` (no API key, or its primary holds data) or `failed`."""

    status: str
    message: str

    @classmethod
    def of(cls, error: BaseException) -> Failed:
        if isinstance(error, MissingApiKey):
            status, message = "skipped", f"missing API key: {error.env_var} is not set"
        elif isinstance(error, PrimaryLoaded):
            status, message = "skipped", str(error)
        else:
            status, message = "failed", f"{type(error).__name__}: {error}"
        return cls(status, redact(message, known_secrets()))


Outcome = Parsed | Unchanged | Failed


@dataclass(frozen=True)
class Prepared:
    """A source's run and what preparing it came to: everything its load needs."""

    source: Source
    run: RunRecord
    outcome: Outcome


def prepare_source(source: Source, options: FetchOptions, previous: FetchTokens | None = None, rates: ExchangeRates = NO_RATES) -> Outcome:
    """Fetch and parse one source; never opens the warehouse, never raises (a failure is its outcome)."""
    try:
        fetched = fetch_source(source, options, previous)
        return Parsed(collect_source(source, fetched.pages, rates, processes=options.settings.parse_processes), len(fetched.pages), fetched.tokens)
    except SourceUnchanged as unchanged:
        return Unchanged(str(unchanged), unchanged.checked_at)
    except Exception as exc:  # noqa: BLE001 - any failure of one source is recorded, the others go on
        return Failed.of(exc)


def validate_sources(parsed: Sequence[tuple[Source, Collected | Sequence[ParseItem], int]]) -> list[SourceBatch | Exception]:
    """One validated batch per table each (source, items, pages) fills, with rejections from parsing
    riding along, in one pandera pass per table for all of them. A source whose batch fails as a
    whole fails by itself, with its error in its place (schemas.validate.validate_each)."""
    for source, _, _ in parsed:
        report(source.name, "validating")
    collected = [items if isinstance(items, Collected) else collect(items) for _, items, _ in parsed]
    tables = list(dict.fromkeys(table for source, _, _ in parsed for table in source.tables))
    checked: list[dict[str, Validated | Exception]] = [{} for _ in parsed]
    for table in tables:
        fill = [n for n, (source, _, _) in enumerate(parsed) if table in source.tables]
        results = validate_each(table, [collected[n].frame(table) for n in fill])
        for n, result in zip(fill, results, strict=True):
            checked[n][table] = result
    out: list[SourceBatch | Exception] = []
    for (source, _, pages), items, own in zip(parsed, collected, checked, strict=True):
        try:
            with secrets_redacted():
                error = next((own[t] for t in source.tables if isinstance(own[t], Exception)), None)
                if error is not None:
                    raise error
                out.append(_source_batch(source, items, pages, own))  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - one source's failure is its own
            out.append(exc)
    return out


def _source_batch(source: Source, items: Collected, pages: int, validated: Mapping[str, Validated]) -> SourceBatch:
    earlier = items.rejected
    batches = [Validated(table, validated[table].frame, _scrubbed([r for r in earlier if r.table == table] + validated[table].rejected))
               for table in source.tables]  # fmt: skip
    stray = [r for r in earlier if r.table not in source.tables]
    batches[0].rejected.extend(_scrubbed(stray))
    return SourceBatch(batches, pages, skipped=items.skipped)


def _scrubbed(rejected: list[Rejected]) -> list[Rejected]:
    """Rejected rows hold values as the parser decoded them (a JSON-escaped key comes out whole),
    so known keys are redacted from the decoded row before it is stored."""
    secrets = known_secrets()
    if not secrets:
        return rejected
    return [_scrubbed_one(r, secrets) for r in rejected]


def _scrubbed_one(r: Rejected, secrets: tuple[str, ...]) -> Rejected:
    if isinstance(r.row, RowText):  # collected: scrubbed before it was encoded
        return Rejected(r.table, tuple(redact(x, secrets) for x in r.reasons), r.row)
    return Rejected(r.table, tuple(redact(x, secrets) for x in r.reasons), redact_value(r.row, secrets))


@secrets_redacted()
def load_batches(con: duckdb.DuckDBPyConnection, run: RunRecord, batch: SourceBatch, burst: Burst | None = None) -> RunRecord:
    """Batch checks and the atomic load (within `burst`, which writes some of it at its end: load.Burst);
    on failure `run` keeps the rejected rows for the record."""
    report(run.source, "loading")
    run.pages = batch.pages
    run.rows_fetched = sum(b.frame.height + len(b.rejected) for b in batch.batches)
    run.rows_skipped = batch.skipped
    load_source(con, run, batch.batches, burst)
    report(run.source, run.status, run.error if run.status == "quarantined" else f"{run.rows_valid} rows, {run.rows_rejected} rejected")
    return run


def record_outcome(con: duckdb.DuckDBPyConnection, prepared: Prepared, burst: Burst | None = None) -> RunRecord:
    """The `scrape_runs` row of a source that does not load: unchanged (its rows stay current and
    count as seen now), skipped or failed."""
    run, outcome = prepared.run, prepared.outcome
    if isinstance(outcome, Unchanged):
        if run.capture is not None:
            run.captured_at = outcome.checked_at
        fetch_tokens.record_unchanged(con, run, prepared.source.tables, outcome.checked_at)
        report(run.source, "unchanged", outcome.reason)
    else:
        assert isinstance(outcome, Failed), "a parsed source loads (load_batches)"
        record_failure(con, run, outcome.status, outcome.message, burst)
        report(run.source, outcome.status, outcome.message)
    return run


@dataclass(frozen=True)
class Started:
    """What a refresh knows before any source fetches (`start_refresh`)."""

    sources: list[Source]  # the sources asked for, and their prerequisites
    runs: dict[str, RunRecord]  # each source's run, recorded `running`
    tokens: dict[str, FetchTokens]  # the last good run's fetch tokens, by source
    rates: ExchangeRates
    primaries: dict[str, str | None]  # last run status of each fallback's primary this refresh leaves out


def start_refresh(writer: db.Writer, sources: Sequence[Source], options: FetchOptions, prerequisites: bool = True, flow_run_id: str | None = None) -> Started:
    """Everything before the first fetch, in one opening of the warehouse. A refresh killed from
    here on leaves `running` rows, which the next one marks `interrupted`."""
    with writer.open() as con:
        load_reference(con, options.settings.schedules, options.reference_cache)
        if isinstance(writer, db.FileWriter):
            writer.reference_loaded(con)
        rates = exchange_rates(con)
        chosen = with_prerequisites(sources, rates) if prerequisites else list(sources)
        runs = {source.name: new_run(source, flow_run_id, options.replay_dir) for source in chosen}
        with db.transaction(con):
            runs_log.interrupt_dead_runs(con, datetime.now(UTC))
            runs_log.start_runs(con, runs.values())
        tokens = fetch_tokens.load_all(con) if options.record_dir is None else {}  # a recording fetches in full
        absent = {s.fallback_for for s in chosen if s.fallback_for is not None and s.fallback_for not in runs}
        with con.cursor() as cursor:
            primaries = {name: _status(cursor.execute(db.query_sql("last_run_status"), {"source": name}).fetchone()) for name in sorted(absent)}
    return Started(chosen, runs, tokens, rates, primaries)


def _status(row: tuple[Any, ...] | None) -> str | None:
    return row[0] if row else None


def load_prepared(
    writer: db.Writer, ready: Sequence[Prepared], fallbacks: Sequence[tuple[Source, RunRecord]] = (), *, read_rates: bool = False
) -> tuple[list[RunRecord], dict[str, tuple[ExchangeRate, ...]] | None]:
    """Validate the ready sources together, then load them in one opening of the warehouse.

    Validation runs before the file opens. Each source loads (or records why it did not) all or
    nothing, as `load_source` promises, and the fetch tokens of those that loaded are stored;
    the burst commits once (`_write_burst`). `fallbacks` wait on a primary in `ready`: one whose primary now holds
    data is recorded skipped in the same opening, unfetched; the others are left to run. With
    `read_rates`, the exchange rates as they stand after these loads come back too. When the
    file cannot be opened, every run says why it was not recorded.
    """
    parsed = {id(p): p.outcome for p in ready if isinstance(p.outcome, Parsed)}
    checked = validate_sources([(p.source, p.outcome.items, p.outcome.pages) for p in ready if isinstance(p.outcome, Parsed)])
    batches = dict(zip(parsed, checked, strict=True))
    runs: list[RunRecord] = []
    rates = None
    try:
        with writer.open() as con, load_memory(con) if _rows(parsed.values()) >= BIG_BURST_ROWS else nullcontext():
            runs += _write_burst(con, ready, batches, fallbacks)
            if read_rates:
                rates = exchange_rates(con)
    except DatabaseBusy as busy:
        for p in ready[len(runs):]:
            batch = batches.get(id(p))
            failed = p.outcome if isinstance(p.outcome, Failed) else Failed.of(batch if isinstance(batch, Exception) else busy)
            p.run.status, p.run.error = "failed", redact(f"{failed.message}; not recorded: {busy}", known_secrets())
            p.run.finished_at = p.run.finished_at or datetime.now(UTC)
            report(p.run.source, "failed", p.run.error)
            runs.append(p.run)
    return runs, rates


def _write_burst(
    con: duckdb.DuckDBPyConnection, ready: Sequence[Prepared], batches: Mapping[int, SourceBatch | Exception],
    fallbacks: Sequence[tuple[Source, RunRecord]],
) -> list[RunRecord]:
    """Every write of a burst, committed once: each source's own transaction joins the burst's.

    A commit per source cost a fixtures refresh a tenth of its time; inside the one transaction,
    what no later load of the burst reads is written once at its end (load.Burst). Each source still loads
    all or nothing: when any of them rolls its transaction back (a batch refused mid-merge, an
    engine error), the whole burst is rolled back and written again source by source, each in
    its own transaction, from the runs as they were. A lake commits each transaction itself
    (lake.LakeConnection replays one that lost a conflict), so there each source commits alone.
    """
    if type(con) is not duckdb.DuckDBPyConnection:
        return _write_each(con, ready, batches, fallbacks)
    before = [(run, dict(vars(run), rejected=list(run.rejected))) for run in [p.run for p in ready] + [run for _, run in fallbacks]]
    joined = _JoinedTransactions(con)
    con.begin()
    try:
        burst = Burst.start(con, [p.source.name for p in ready])
        runs = _write_each(joined, ready, batches, fallbacks, burst)  # type: ignore[arg-type]  # quacks like a connection
        if not joined.rolled_back:
            burst.finish(con)
            con.commit()
            return runs
    except Exception as exc:  # a source's failure inside its transaction, or the commit's: each source alone, below
        if not joined.rolled_back and not isinstance(exc, duckdb.Error):
            _rollback(con)
            raise
    except BaseException:
        _rollback(con)
        raise
    _rollback(con)
    for run, state in before:
        vars(run).update(state, rejected=list(state["rejected"]))
    return _write_each(con, ready, batches, fallbacks)


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.rollback()
    except duckdb.Error:  # a commit that failed has rolled back already
        pass


class _JoinedTransactions:
    """A connection inside a burst's transaction: `begin` and `commit` join it, `rollback` marks
    it to be rolled back and written again source by source (`_write_burst`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self._con = con
        self.rolled_back = False

    def begin(self) -> None:
        pass

    def commit(self) -> None:
        pass

    def rollback(self) -> None:
        self.rolled_back = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def _write_each(
    con: duckdb.DuckDBPyConnection, ready: Sequence[Prepared], batches: Mapping[int, SourceBatch | Exception],
    fallbacks: Sequence[tuple[Source, RunRecord]], burst: Burst | None = None,
) -> list[RunRecord]:
    """Each ready source loaded (or its outcome recorded), the fallbacks whose primary now holds
    data recorded skipped, and the fetch tokens of the sources that loaded stored."""
    runs = [_load_one(con, p, batches.get(id(p)), burst) for p in ready]
    status = {run.source: run.status for run in runs}
    for source, run in fallbacks:
        primary = source.fallback_for or ""
        if status.get(primary) in _PRIMARY_HOLDS:
            runs.append(record_outcome(con, Prepared(source, run, Failed.of(PrimaryLoaded(primary, status[primary]))), burst))
    loaded = [(p.source.name, tokens, p.run.run_id) for p in ready
              if (tokens := getattr(p.outcome, "tokens", None)) is not None and p.run.status == "ok"]  # fmt: skip
    fetch_tokens.save_all(con, loaded)
    return runs


# DuckDB's own memory while a burst loads. By default it may buffer up to 80% of the machine's
# memory and keeps what a statement freed (up to 128 MB) for the next: loading 100k Vast offers
# (a 45 MB frame) grew the process by 270 MB. With one thread and a 100 MB budget it spills to
# disk instead and gives memory back, and the same load grows it by about 110 MB. These are the
# database's settings, so they are put back after the burst.
LOAD_SETTINGS = {"threads": "1", "memory_limit": "100MB", "allocator_flush_threshold": "8MB"}
# A burst of fewer rows than this loads with DuckDB's own settings: its memory is small anyway,
# and a load that scans a long history keeps both threads.
BIG_BURST_ROWS = 10_000


def _rows(parsed: Iterable[Parsed]) -> int:
    return sum(p.items.rows if isinstance(p.items, Collected) else len(p.items) for p in parsed)


@contextmanager
def load_memory(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """`LOAD_SETTINGS` on `con` for the duration, then each back to what it was (as DuckDB reports
    it: a memory size to 0.1 GiB); a connection that refuses one keeps its own."""
    before: dict[str, Any] = {}
    for name, value in LOAD_SETTINGS.items():  # names and values from the constant above
        try:
            [(was,)] = con.execute(f"SELECT current_setting('{name}')").fetchall()
            con.execute(f"SET {name} = '{value}'")
            before[name] = was
        except duckdb.Error:
            pass
    try:
        yield
    finally:
        for name, was in before.items():
            try:
                con.execute(f"SET {name} = '{was}'")
            except duckdb.Error:
                pass


def _load_one(con: duckdb.DuckDBPyConnection, prepared: Prepared, batch: SourceBatch | Exception | None, burst: Burst | None = None) -> RunRecord:
    try:
        if batch is None:
            return record_outcome(con, prepared, burst)
        if isinstance(batch, Exception):
            raise batch
        return load_batches(con, prepared.run, batch, burst)
    except Exception as exc:  # noqa: BLE001 - any failure of one source is recorded, the others go on
        return record_outcome(con, Prepared(prepared.source, prepared.run, Failed.of(exc)), burst)


class Steps:
    """Where each step of a refresh runs. These run here: starts and loads in the calling thread,
    preparations on a thread pool. A tracking runner subclasses it, running each step as one of
    its tasks (flows/refresh.py); `prepare` only has to return a future of the outcome."""

    def __init__(self, max_workers: int = 4):
        self.max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None

    def start(self, writer: db.Writer, sources: Sequence[Source], options: FetchOptions, prerequisites: bool, flow_run_id: str | None) -> Started:
        return start_refresh(writer, sources, options, prerequisites, flow_run_id)

    def prepare(self, source: Source, options: FetchOptions, previous: FetchTokens | None, rates: ExchangeRates) -> Future[Outcome]:
        self._pool = self._pool or ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix="gpucat-prepare")
        return self._pool.submit(prepare_source, source, options, previous, rates)

    def load(
        self, writer: db.Writer, ready: Sequence[Prepared], fallbacks: Sequence[tuple[Source, RunRecord]], read_rates: bool
    ) -> tuple[list[RunRecord], dict[str, tuple[ExchangeRate, ...]] | None]:
        return load_prepared(writer, ready, fallbacks, read_rates=read_rates)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def refresh_sources(
    warehouse: db.Writer | duckdb.DuckDBPyConnection,
    sources: Sequence[Source],
    options: FetchOptions,
    *,
    steps: Steps | None = None,
    prerequisites: bool = True,
    flow_run_id: str | None = None,
) -> list[RunRecord]:
    """A refresh of `sources`, each run of it, in load order: the one orchestrator every runner wraps.

    The rate sources (`loads_first`, and with `prerequisites` every one of them while the warehouse
    holds no rates) load first; the others then fetch and parse concurrently with the warehouse
    closed, converting with the rates just loaded. Whatever is ready is validated together and
    loaded in one opening of the file (each source all or nothing), which closes again
    until more is ready: readers get in between those bursts. A fallback runs only when its
    primary (this refresh's run, else the warehouse's last) was skipped or failed; otherwise
    it is recorded skipped, in the opening that loaded its primary. A failure is recorded, never
    raised.
    """
    writer = db.as_writer(warehouse)
    steps = steps or Steps()
    try:
        start = steps.start(writer, sources, options, prerequisites, flow_run_id)
        waiting: dict[str, list[Source]] = {}  # primary -> its fallbacks, while its outcome is unknown
        skips: list[Prepared] = []  # fallbacks whose primary, left out of this refresh, holds data
        first, rest = [s for s in start.sources if s.loads_first], []
        for source in start.sources:
            if source.loads_first:
                continue
            if source.fallback_for in start.runs:
                waiting.setdefault(source.fallback_for, []).append(source)
            elif source.fallback_for is not None and (held := start.primaries.get(source.fallback_for)) in _PRIMARY_HOLDS:
                skips.append(Prepared(source, start.runs[source.name], Failed.of(PrimaryLoaded(source.fallback_for, str(held)))))
            else:
                rest.append(source)
        runs: dict[str, RunRecord] = {}
        rates = start.rates
        for phase in (first, rest):
            pending: dict[Future[Outcome], Source] = {}
            for source in phase:
                pending[steps.prepare(source, options, start.tokens.get(source.name), rates)] = source
            while pending:
                done, _ = _gather(set(pending), *(REPLAY_GATHER if options.replay_dir is not None else LIVE_GATHER))
                ready = skips + [Prepared(source, start.runs[source.name], _outcome(future)) for future, source in pending.items() if future in done]
                skips = []
                for future in done:
                    del pending[future]
                fallbacks = [(f, start.runs[f.name]) for p in ready for f in waiting.pop(p.source.name, [])]
                loaded, now = steps.load(writer, ready, fallbacks, not pending)
                runs.update((run.source, run) for run in loaded)
                for fallback, _ in fallbacks:  # a fallback whose primary did not hold data runs now
                    if fallback.name not in runs:
                        pending[steps.prepare(fallback, options, start.tokens.get(fallback.name), rates)] = fallback
                rates = now if now is not None else rates
        if skips:  # only fallbacks of absent primaries: nothing else to load with
            loaded, _ = steps.load(writer, skips, [], False)
            runs.update((run.source, run) for run in loaded)
    finally:
        steps.close()
    return [runs[source.name] for phase in phases(start.sources) for source in phase]


def _outcome(future: Future[Outcome]) -> Outcome:
    """A preparation's outcome; a runner's own failure (a worker lost) fails only that source."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001
        return Failed.of(exc)


# A burst waits for sources that finish close behind the first (at most GAP apart, for at most
# MAX in all): live ones, seconds apart, load each in their own burst. A replay reads local files,
# so its preparations only wait on each other's parsing: it waits for them all (on a busy machine
# parses finish tenths of a second apart), and a second opening and validation pass is saved.
LIVE_GATHER = (0.05, 1.0)  # (GAP, MAX) in seconds
REPLAY_GATHER = (1.0, 30.0)


def _gather(pending: set[Future[Outcome]], gap_s: float = LIVE_GATHER[0], max_s: float = LIVE_GATHER[1]) -> tuple[set[Future[Outcome]], set[Future[Outcome]]]:
    """(done, still pending): at least one finished preparation, and those that finish soon after it."""
    done, pending = wait(pending, return_when=FIRST_COMPLETED)
    deadline = time.monotonic() + max_s
    while pending and time.monotonic() < deadline:
        more, pending = wait(pending, timeout=gap_s, return_when=FIRST_COMPLETED)
        if not more:
            break
        done |= more
    return done, pending


def refresh_catalog(
    db_file: str | Path, sources: Sequence[Source], *, replay_dir: Path | None = None, record_dir: Path | None = None,
    settings: Settings | None = None,
) -> list[RunRecord]:
    """A whole refresh in this process (`gpucat refresh`), with its prerequisites, fetched pages in a temporary folder."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gpucat-") as workdir:
        cache = settings.cache_root() / "reference" if settings is not None else None  # the edge's settings only: tests pass none
        options = FetchOptions(
            workdir=Path(workdir), replay_dir=replay_dir, record_dir=record_dir, settings=settings or Settings(), reference_cache=cache
        )
        return refresh_sources(db.writer(db_file, lake_data=options.settings.lake_data, templates=cache), sources, options)


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


def load_reference(con: duckdb.DuckDBPyConnection, schedules: Path | None = None, cache: Path | None = None) -> dict[str, int]:
    """Validate every reference CSV against its model, then replace the tables (and the sources'
    freshness budgets) in one transaction: only those whose file or code changed since they were
    last loaded (warehouse/reference.py). With `cache`, a CSV validated before (same file, same
    model) is read back from there. Returns the rows written per table."""
    tables = {table: reference.csv_reference(path, model, cache) for table, (path, model) in REFERENCE_TABLES.items()}
    config = schedules_file.config_path(schedules)
    budgets = reference.digest(config, Path(schedules_file.__file__), ",".join(sorted(all_sources())))
    tables["source_schedules"] = reference.Reference(budgets, partial(schedules_frame, config))  # freshness budgets, from the schedules file
    return db.load_changed_reference(con, tables)
