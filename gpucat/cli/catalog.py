"""Catalog commands: refresh, status, offers, sql, parse, export."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from gpucat.cli._app import app
from gpucat.cli._common import DbOption, JsonOption, echo_json, fail, finite, handle_errors, open_catalog, split_list
from gpucat.cli._dask import DaskAddressOption, DaskOption, DaskWorkersOption, dask_chosen
from gpucat.cli._render import Col, ColumnsOption, choose, echo_wrapped, print_csv, print_json_records, print_records, print_table
from gpucat.schemas.errors import UserInputError


@app.command()
@handle_errors
def refresh(
    providers: Annotated[
        list[str] | None,
        typer.Option("--providers", "-p", help="Providers or sources to refresh (repeat or comma-separate); default all."),
    ] = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Serve responses from this capture directory instead of the network.")
    ] = None,
    demo: Annotated[bool, typer.Option(
        "--demo", help="Replay the sample capture shipped with gpucat (no network; works from any directory).",
    )] = False,
    record: Annotated[Path | None, typer.Option("--record", help="Keep every response fetched in this capture directory.")] = None,
    db: DbOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's logs.")] = False,
    as_json: JsonOption = False,
    dask: DaskOption = False,
    dask_workers: DaskWorkersOption = None,
    dask_address: DaskAddressOption = None,
) -> None:
    """Scrape the providers (or replay a capture) into the DuckDB file.

    --demo replays the sample capture that ships inside the package (in a checkout, the same
    files as `--replay fixtures`), into the default database unless --db says otherwise.

    Without a Prefect API ($PREFECT_API_URL unset) the sources run concurrently in this process;
    with one, the refresh is a tracked Prefect flow run (same steps, same records). Exits 1 when
    any source failed; the other sources' data is loaded all the same and a failed source keeps
    its previous data as current truth.

    Either way one orchestrator runs it: on a new warehouse the exchange-rate sources join the
    ones asked for, so their prices convert. With --dask or --dask-address the refresh is a
    Prefect flow run whose per-source fetch and parse run on Dask workers (Prefect's temporary
    local API when PREFECT_API_URL is unset); the workers must see this machine's files (the
    fetched pages, the capture directory).
    """
    from gpucat import progress
    from gpucat.cli._common import DEMO_CAPTURE, catalog_target, cli_settings
    from gpucat.scrapers import select_sources
    from gpucat.scrapers.capture import read_manifest
    from gpucat.suggest import check_sources_or_providers

    if demo and replay is not None:
        raise UserInputError("--demo replays the bundled capture: leave out --replay, or --demo")
    replay = DEMO_CAPTURE if demo else replay
    settings = cli_settings()
    target = catalog_target(db, settings)

    names = split_list(providers)
    if providers is not None and not names:  # `-p ""` names nothing: it must not mean every source
        raise UserInputError("--providers names no provider or source; leave it out to refresh all")
    check_sources_or_providers(names)
    sources = select_sources(names or None)  # unknown names fail here, before anything starts
    if replay is not None:
        read_manifest(replay)  # a missing or malformed capture directory is one clear line
    task_runner = None
    if dask_chosen(dask, dask_workers, dask_address):
        _quiet_prefect(verbose)  # before prefect-dask imports Prefect, which reads its logging settings once
        from gpucat.flows.runners import dask_task_runner

        task_runner = dask_task_runner(dask_address, dask_workers)
    tracked = bool(os.environ.get("PREFECT_API_URL")) or task_runner is not None
    if tracked:
        from gpucat.cli._common import require_extra

        require_extra("prefect", "serve", "a tracked refresh (PREFECT_API_URL is set)")
    from gpucat.cli._progress import RefreshProgress

    with RefreshProgress([s.name for s in sources], quiet=as_json) as display:
        unsubscribe = progress.subscribe(display.update)
        try:
            if tracked:
                state_name, message, summary = _refresh_as_flow_run(names, replay, record, target, verbose, task_runner)
            else:
                from gpucat import pipeline

                runs = pipeline.refresh_catalog(target, sources, replay_dir=replay, record_dir=record, settings=settings)
                summary = [pipeline.summary_row(run) for run in runs]
                ok, message = pipeline.refresh_outcome(summary)
                state_name = "COMPLETED" if ok else "FAILED"
        finally:
            unsubscribe()
    if as_json:
        echo_json({"state": state_name, "message": message, "sources": summary})
    else:
        columns = ["source", "status", "rows_fetched", "rows_valid", "rows_rejected", "rows_skipped", "duration_s", "error"]
        print_table(columns, [[row[c] for c in columns] for row in summary], title=f"refresh: {message}")
        echo_wrapped(f"database: {_describe(target)}")
    if any(row["status"] == "failed" for row in summary):
        raise typer.Exit(1)


def _refresh_as_flow_run(
    names: list[str], replay: Path | None, record: Path | None, db: Path, verbose: bool, task_runner: Any = None
) -> tuple[str, str, list]:
    """The refresh as a Prefect flow run on the configured API (tracked, with its artifact).

    With a task runner (Dask), its steps run in worker processes: paths go absolute, since a
    worker's working directory need not be this one."""
    _quiet_prefect(verbose)
    parameters: dict[str, Any] = {
        "providers": names or None,
        "replay_dir": str(replay) if replay else None,
        "record_dir": str(record) if record else None,
        "db_path": str(db),
    }
    from gpucat.flows.runners import run_refresh

    if task_runner is not None:
        parameters |= {k: str(Path(v).resolve()) for k, v in parameters.items() if k != "providers" and v is not None}
    state = run_refresh(task_runner, **parameters)
    summary = state.result(raise_on_failure=False)
    if isinstance(summary, BaseException):
        raise fail(f"refresh did not complete: {summary}")
    return state.type.value, state.message or "", summary


def _describe(target: Any) -> str:
    """The database a command used, as the user can find it again: a file's absolute path, a lake
    URL with any password left out."""
    if isinstance(target, Path):
        return str(target.resolve()) if str(target) != ":memory:" else str(target)
    from gpucat.warehouse.lake import describe

    return describe(target)


def _quiet_prefect(verbose: bool) -> None:
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


@app.command()
@handle_errors
def sources(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the README's Markdown table.")] = False,
    columns: ColumnsOption = None,
    as_json: JsonOption = False,
) -> None:
    """The registered sources: provider, hosts, API key variable, tables, what each loads, and
    where its fixtures came from (real, derived or written bodies, from its fixture NOTES.md)."""
    from gpucat.scrapers import all_sources, sources_table
    from gpucat.scrapers._provenance import provenance_summary

    if markdown:
        sys.stdout.write(sources_table())
        return
    rows = [
        {"source": s.name, "provider": s.provider, "api_key_env": s.api_key_env, "api_key_required": s.api_key_required,
         "tables": list(s.tables), "hosts": sorted(s.hosts), "description": s.description, "docs_url": s.docs_url,
         "fallback_for": s.fallback_for, "fixtures": provenance_summary(s.provider, s.name)}
        for s in all_sources().values()
    ]  # fmt: skip
    if as_json:
        echo_json(rows)
        return
    print_records(choose(SOURCE_COLUMNS, SOURCE_DEFAULT, columns), rows)


SOURCE_COLUMNS = (
    Col("source", shrink=False), Col("provider"),
    Col("key", get=lambda r: (r["api_key_env"] + (" (required)" if r["api_key_required"] else " (optional)")) if r["api_key_env"] else "none"),
    Col("tables"), Col("hosts"), Col("fixtures"), Col("fallback_for"), Col("description"), Col("docs_url"),
)  # fmt: skip
SOURCE_DEFAULT = ("source", "provider", "key", "tables", "fixtures", "description")


@app.command()
@handle_errors
def status(columns: ColumnsOption = None, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Per source: last run, its age and status, rows loaded, rejected and skipped, unmapped GPUs.

    Also names sources with no good run within their freshness budget (from the schedules file),
    lists quarantined runs (batches held for inspection, not loaded) with the command that loads
    them, and flags provider terms (billing, storage, egress) last verified more than 180 days ago.
    """
    from gpucat import catalog, terms
    from gpucat.cli._common import catalog_target, cli_settings
    from gpucat.freshness import data_age, source_freshness

    settings = cli_settings()
    target = catalog_target(db, settings)
    with open_catalog(target, settings=settings) as con:
        rows = catalog.status(con, settings.now)
        terms_age = terms.age_by_provider(con)
        freshness = source_freshness(con)
        ages = data_age(con)
    for row in rows:
        row.update(terms_age.get(row["provider"], {"terms_verified_on": None, "terms_stale": None}))
        row.update(freshness.get(row["source"], {"stale_after_hours": None, "stale": None}))
        row.update(catalog.data_fields(ages.sources.get(row["source"])))
    if as_json:
        typer.echo(f"note: database {_describe(target)}", err=True)
        echo_json(rows)
        return
    echo_wrapped(f"database: {_describe(target)}")
    print_records(choose(STATUS_COLUMNS, STATUS_DEFAULT, columns), rows, title=ages.label())
    stale_data = [f"{r['source']} (budget {r['stale_after_hours']:g} h)" for r in rows if r.get("stale")]
    if stale_data:
        echo_wrapped(f"stale sources, no good run within their freshness budget: {', '.join(stale_data)}")
    for r in rows:
        for run_id in r.get("quarantined_runs") or []:
            echo_wrapped(f"quarantined: {r['source']} run {run_id} is held for inspection, not loaded; load it with `gpucat accept {run_id}`")
    stale = sorted(provider for provider, a in terms_age.items() if a["terms_stale"])
    if stale:
        echo_wrapped(f"terms older than {terms.STALE_AFTER_DAYS} days: {', '.join(stale)} (gpucat providers shows them)")


STATUS_COLUMNS = (
    Col("source", shrink=False), Col("provider"), Col("status", shrink=False), Col("last_run", "last run", get=lambda r: r.get("last_run_at")),
    Col("age", "data age", kind="age", get=lambda r: r.get("data_age_s")), Col("run_age", "run age", kind="age", get=lambda r: r.get("age_s")),
    Col("data", get=lambda r: (f"replay {r['captured_at']:%Y-%m-%d}" if r.get("captured_at") else "replay") if r.get("capture") else
        ("live" if r.get("data_seen_at") else "")),
    Col("last_ok", "last ok", get=lambda r: r.get("last_ok_at")),
    Col("rows", kind="count", get=lambda r: r.get("rows_valid")), Col("rejected", kind="count", get=lambda r: r.get("rows_rejected")),
    Col("skipped", kind="count", get=lambda r: r.get("rows_skipped")), Col("unmapped", kind="count", get=lambda r: r.get("unmapped_rows")),
    Col("unknown_gpus", "unknown GPUs", get=lambda r: r.get("unknown_gpus")), Col("error", get=lambda r: r.get("error")),
    Col("terms", get=lambda r: f"{r['terms_verified_on'] or ''}{' stale' if r['terms_stale'] else ''}"),
    Col("stale", get=lambda r: "stale" if r.get("stale") else ""),
)  # fmt: skip
STATUS_DEFAULT = ("source", "status", "age", "data", "stale", "rows", "rejected", "skipped", "unmapped", "terms", "unknown_gpus", "error")


class OfferFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


@app.command()
@handle_errors
def offers(
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", "-g", help="GPU model (H100-SXM), family (H100) or the forms other tools use (A100-80GB, "
                     "RTX4090, 4090; H100:8 also asks for 8 GPUs); repeat or comma-separate."),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", help="Only these providers; repeat or comma-separate.")] = None,
    min_gpu_memory: Annotated[float | None, typer.Option("--min-gpu-memory", help="Minimum memory per GPU, GB.", min=0, callback=finite)] = None,
    max_price: Annotated[float | None, typer.Option("--max-price", help="Maximum USD per GPU-hour.", min=0, callback=finite)] = None,
    spot: Annotated[bool, typer.Option("--spot", help="Only spot offers.")] = False,
    on_demand: Annotated[bool, typer.Option("--on-demand", help="Only on-demand offers.")] = False,
    available: Annotated[bool, typer.Option(
        "--available", help="Drop offers reported out of stock (unknown stock, e.g. AWS, stays).",
    )] = False,
    include_stale: Annotated[bool, typer.Option(
        "--include-stale", help="Keep offers of sources past their freshness budget (left out by default, as in fit and cost).",
    )] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many rows.", min=1)] = 50,
    show_all: Annotated[bool, typer.Option("--all", help="Every matching offer (no --limit).")] = False,
    columns: ColumnsOption = None,
    output: Annotated[OfferFormat, typer.Option("--format", "-f", help="Output format (csv and json carry every column).")] = OfferFormat.table,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Current offers, cheapest per GPU-hour first."""
    from gpucat import availability, catalog, suggest
    from gpucat.freshness import data_age
    from gpucat.gpu_names import resolve_gpus

    if spot and on_demand:
        raise UserInputError("--spot and --on-demand exclude each other")
    output = OfferFormat.json if as_json else output
    shown = choose(OFFER_COLUMNS, OFFER_DEFAULT, columns)
    gpus, gpu_count = resolve_gpus(split_list(gpu))
    providers = split_list(provider)
    suggest.check_providers(providers)
    query = OfferQuery(gpus=gpus, providers=tuple(providers), min_gpu_memory_gb=min_gpu_memory,
                       max_usd_per_gpu_hour=max_price, market="spot" if spot else "on_demand" if on_demand else None,
                       available_only=available, gpu_count=gpu_count, include_stale=include_stale)  # fmt: skip
    with open_catalog(db) as con:
        result = catalog.offers(con, **asdict(query), limit=None if show_all else limit)
        note = availability.available_note(con, providers) if available and output is OfferFormat.table else None
        empty_because = None
        if not result.rows:
            count = lambda q: catalog.offers(con, **asdict(q), limit=1).total  # noqa: E731
            empty_because = availability.why_empty(query, count, OFFER_FILTERS)
        replay = data_age(con).label()
    cut = (result.total or 0) - len(result.rows)
    if cut:
        typer.echo(f"note: showing {len(result.rows)} of {result.total} offers; --limit N or --all shows more", err=True)
    if output is not OfferFormat.table:
        if replay:
            typer.echo(f"note: {replay}", err=True)
        (print_csv if output is OfferFormat.csv else print_json_records)(result.columns, result.rows)
        return
    if not result.rows:
        echo_wrapped(f"No current offer matches: {empty_because}." if empty_because else "No current offer matches.")
        if replay:
            echo_wrapped(replay, err=True)
        return
    print_records(shown, result.records(), title=replay)
    if note:
        echo_wrapped(note, err=True)


@dataclass(frozen=True)
class OfferQuery:
    """The filters of `gpucat offers`, so an empty answer can name the one that emptied it."""

    gpus: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    min_gpu_memory_gb: float | None = None
    max_usd_per_gpu_hour: float | None = None
    market: str | None = None
    available_only: bool = False
    gpu_count: int | None = None
    include_stale: bool = False


OFFER_FILTERS = (
    ("--gpu", "gpus", ()), ("the GPU count of --gpu NAME:COUNT", "gpu_count", None), ("--provider", "providers", ()),
    ("--min-gpu-memory", "min_gpu_memory_gb", None), ("--spot/--on-demand", "market", None),
    ("--max-price", "max_usd_per_gpu_hour", None), ("--available", "available_only", False),
    ("leaving out stale offers (--include-stale keeps them)", "include_stale", True),
)  # fmt: skip


OFFER_COLUMNS = (
    Col("provider"), Col("instance", get=lambda r: r["instance_type"]), Col("region"),
    Col("market", shrink=False), Col("tier", shrink=False), Col("gpu", get=lambda r: r["gpu_model"], shrink=False), Col("gpus", kind="count", get=lambda r: r["gpu_count"]),
    Col("gb", "GB/gpu", "gb", lambda r: r["gpu_memory_gb"]), Col("vcpus", kind="count"), Col("ram", "RAM GB", "gb", lambda r: r["ram_gb"]),
    Col("price", "$/gpu-h", "money", lambda r: r["usd_per_gpu_hour"]), Col("hourly", "$/h", "money", lambda r: r["usd_per_hour"]),
    Col("stock", get=lambda r: r["availability"], shrink=False), Col("in_stock", "# in stock", "count", lambda r: r["available_count"]),
    Col("link", get=lambda r: r["interconnect"]), Col("fabric"), Col("currency"), Col("offer_id"), Col("source"),
    Col("source_url"), Col("scraped_at"), Col("age", "age", "age", lambda r: _seconds(r["age_hours"])),
    Col("age_hours", "age h", "num", lambda r: None if r["age_hours"] is None else round(r["age_hours"], 1)),
    Col("replayed", get=lambda r: "replay" if r["replayed"] else "live"),
)  # fmt: skip
OFFER_DEFAULT = ("provider", "gpu", "gpus", "gb", "price", "hourly", "market", "tier", "stock", "age", "region", "instance")


def _seconds(hours: float | None) -> float | None:
    return None if hours is None else hours * 3600


class SqlFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


# Rows a `gpucat sql` table shows unless --max-rows says otherwise (CSV and JSON stream every row).
TABLE_MAX_ROWS = 1000
SQL_TIMEOUT_S = 300.0


@app.command()
@handle_errors
def sql(
    query: Annotated[str, typer.Argument(help="One SQL statement, e.g. \"SELECT * FROM current_offers LIMIT 5\".")],
    output: Annotated[SqlFormat, typer.Option("--format", "-f", help="Output format.")] = SqlFormat.table,
    write: Annotated[bool, typer.Option("--write", help="Open the database writable (default read-only).")] = False,
    max_rows: Annotated[int | None, typer.Option(
        "--max-rows", min=1, show_default=False,
        help=f"Print at most this many rows, saying so when rows were left out (default: {TABLE_MAX_ROWS} for a table, all for csv and json).",
    )] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.001, callback=finite, help="Stop the statement after this many seconds.",
    )] = SQL_TIMEOUT_S,
    db: DbOption = None,
) -> None:
    """Run SQL against the DuckDB file (read-only unless --write).

    Rows stream from DuckDB as they are made; a table shows the first --max-rows of them. The
    statement stops at --timeout or on Ctrl-C, and runs under a memory limit.
    """
    from gpucat import catalog

    cap = max_rows if max_rows is not None else (TABLE_MAX_ROWS if output is SqlFormat.table else None)
    with open_catalog(db, read_only=not write) as con, catalog.stream_sql(con, query, write=write, timeout_s=timeout) as run:
        rows, cut = _capped(run.batches, cap)
        if output is SqlFormat.csv:
            print_csv(run.columns, rows)
        elif output is SqlFormat.json:
            print_json_records(run.columns, rows)
        else:
            print_table(run.columns, list(rows))
    if cut[0]:
        echo_wrapped(f"(showed the first {cap:,} rows; the result has more: pass --max-rows, or --format csv/json for every row)", err=True)


def _capped(batches: Iterator[list[tuple[Any, ...]]], cap: int | None) -> tuple[Iterator[tuple[Any, ...]], list[bool]]:
    """The rows one at a time, at most `cap`; `cut[0]` turns true once a row past the cap is seen."""
    cut = [False]

    def rows() -> Iterator[tuple[Any, ...]]:
        seen = 0
        for batch in batches:
            for row in batch:
                if cap is not None and seen == cap:
                    cut[0] = True
                    return
                seen += 1
                yield row

    return rows(), cut


@app.command()
@handle_errors
def parse(
    source: Annotated[str, typer.Argument(help="Source name, e.g. aws-pricelist, aws-spot, azure-retail.")],
    files: Annotated[list[Path], typer.Argument(help="Saved response bodies, in the endpoint's own format.")],
    db: Annotated[
        Path | None,
        typer.Option("--db", help="Convert non-USD prices with this warehouse's exchange rates (default: none loaded).", show_default=False),
    ] = None,
) -> None:
    """Print the normalized records of saved response bodies as JSON lines.

    Each line has a `table` field: the destination table (e.g. `offers`), `rejected_rows`
    with the reasons for a row that would be rejected, or `skipped` with how many rows a page
    held that are not GPU offers (counted, never stored). URL and fetch time come from the
    capture manifest when the file lives in a capture directory. Prices in another currency
    than USD need rates: pass --db to use a warehouse's (else they show as `no_exchange_rate`); each
offer converts with the rate of its own day or the nearest earlier one, and with --db a warning
on stderr names every currency whose nearest rate is missing or over 7 days older than the
offer (those rows show as `stale_exchange_rate`).
    """
    from gpucat import pipeline
    from gpucat.cli._common import cli_settings
    from gpucat.schemas.records import Rejected
    from gpucat.scrapers import all_sources, get_source
    from gpucat.suggest import check_names

    check_names("source", [source], all_sources(), show_all=True)
    chosen = get_source(source)
    pages = pipeline.pages_from_files(files)
    rates = pipeline.NO_RATES
    if db is not None:
        from gpucat.warehouse.db import connect

        with connect(db, read_only=True) as con:
            rates = pipeline.exchange_rates(con)
    items = pipeline.parse_source(chosen, pages, rates, processes=cli_settings().parse_processes)
    if db is not None:  # without --db every non-USD price lacks a rate, as the help says
        for warning in pipeline.rate_warnings(items):
            typer.echo(f"warning: {warning}", err=True)
    for item in items:
        if isinstance(item, Rejected):
            line: dict[str, Any] = {"table": "rejected_rows", "source": chosen.name, "table_name": item.table, "reasons": list(item.reasons), "row": item.row}
        else:
            line = {"table": item.table, **item.as_row()}
        sys.stdout.write(json.dumps(line, default=_json_default, sort_keys=False) + "\n")


def _json_default(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


@app.command()
@handle_errors
def export(
    out: Annotated[Path | None, typer.Option("--out", help="Folder to write snapshot=TIMESTAMP/ under.")] = None,
    verify: Annotated[
        Path | None, typer.Option("--verify", help="Check an existing snapshot folder against its manifest instead.")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write every table and view as Parquet, with a manifest (rows, schema, sha256 per file)."""
    from gpucat.export import export_snapshot, verify_snapshot

    if verify is not None:
        problems = verify_snapshot(verify)
        if as_json:
            echo_json({"snapshot": str(verify), "ok": not problems, "problems": problems})
        else:
            typer.echo("\n".join(problems) if problems else f"{verify}: every file matches its manifest")
        if problems:
            raise typer.Exit(1)
        return
    if out is None:
        raise UserInputError("pass --out DIR (or --verify SNAPSHOT)")
    with open_catalog(db) as con:
        snapshot = export_snapshot(con, out)
    if as_json:
        echo_json({"path": str(snapshot.path), **snapshot.manifest})
    else:
        rows = [[r["name"], r["kind"], r["rows"], r["sha256"][:12]] for r in snapshot.manifest["relations"]]
        print_table(["relation", "kind", "rows", "sha256"], rows, title=str(snapshot.path))
