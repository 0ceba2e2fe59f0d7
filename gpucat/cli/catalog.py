"""Catalog commands: refresh, status, offers, sql, parse, export."""

from __future__ import annotations

import json
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from gpucat.cli import app
from gpucat.cli._common import echo_json, fail, handle_errors
from gpucat.cli._render import age, err_console, print_csv, print_json_records, print_table
from schemas.errors import UserInputError

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="DuckDB file (default: $GPUCAT_DB or ./gpucat.duckdb).", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _split(values: list[str] | None) -> list[str]:
    """Repeated options and comma-separated lists both work: -p aws,azure -p runpod."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


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
    record: Annotated[Path | None, typer.Option("--record", help="Keep every response fetched in this capture directory.")] = None,
    db: DbOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's logs.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Scrape the providers (or replay a capture) into the DuckDB file.

    Without a Prefect API ($PREFECT_API_URL unset) the sources run concurrently in this process;
    with one, the refresh is a tracked Prefect flow run (same steps, same records). Exits 1 when
    any source failed; the other sources' data is loaded all the same and a failed source keeps
    its previous data as current truth.
    """
    from gpucat import progress
    from scrapers import select_sources
    from scrapers.capture import read_manifest
    from warehouse.db import db_path

    names = _split(providers)
    sources = select_sources(names or None)  # unknown names fail here, before anything starts
    if replay is not None:
        read_manifest(replay)  # a missing or malformed capture directory is one clear line
    tracked = bool(os.environ.get("PREFECT_API_URL"))
    with _ProgressTable([s.name for s in sources], enabled=not as_json) as display:
        unsubscribe = progress.subscribe(display.update)
        try:
            if tracked:
                state_name, message, summary = _refresh_as_flow_run(names, replay, record, db_path(db), verbose)
            else:
                from gpucat import pipeline

                runs = pipeline.refresh_catalog(db_path(db), sources, replay_dir=replay, record_dir=record)
                summary = [pipeline.summary_row(run) for run in runs]
                ok, message = pipeline.refresh_outcome(summary)
                state_name = "COMPLETED" if ok else "FAILED"
        finally:
            unsubscribe()
    if as_json:
        echo_json({"state": state_name, "message": message, "sources": summary})
    else:
        columns = ["source", "status", "rows_fetched", "rows_valid", "rows_rejected", "duration_s", "error"]
        print_table(columns, [[row[c] for c in columns] for row in summary], title=f"refresh: {message}")
    if any(row["status"] == "failed" for row in summary):
        raise typer.Exit(1)


def _refresh_as_flow_run(names: list[str], replay: Path | None, record: Path | None, db: Path, verbose: bool) -> tuple[str, str, list]:
    """The refresh as a Prefect flow run on the configured API (tracked, with its artifact)."""
    _quiet_prefect(verbose)
    from flows.refresh import refresh as refresh_flow

    state = refresh_flow(
        providers=names or None,
        replay_dir=str(replay) if replay else None,
        record_dir=str(record) if record else None,
        db_path=str(db),
        return_state=True,
    )
    summary = state.result(raise_on_failure=False)
    if isinstance(summary, BaseException):
        raise fail(f"refresh did not complete: {summary}")
    return state.type.value, state.message or "", summary


def _quiet_prefect(verbose: bool) -> None:
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "CRITICAL")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # A first run on a fresh machine migrates Prefect's own database; give it time.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


class _ProgressTable:
    """A live per-source table on stderr, fed by pipeline progress events."""

    def __init__(self, sources: list[str], enabled: bool):
        self.state = {s: ("waiting", "") for s in sources}
        self.enabled = enabled and err_console.is_terminal
        self.live: Any = None

    def __enter__(self) -> _ProgressTable:
        if self.enabled:
            from rich.live import Live

            self.live = Live(self._render(), console=err_console, transient=True, refresh_per_second=8)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def update(self, source: str, stage: str, detail: str | None) -> None:
        self.state[source] = (stage, detail or "")
        if self.live is not None:
            self.live.update(self._render())

    def _render(self) -> Any:
        from rich.table import Table

        table = Table(title="refreshing", header_style="bold")
        table.add_column("source")
        table.add_column("stage")
        table.add_column("detail", overflow="fold")
        for source, (stage, detail) in self.state.items():
            table.add_row(source, stage, detail)
        return table


@app.command()
@handle_errors
def sources(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the README's Markdown table.")] = False,
    as_json: JsonOption = False,
) -> None:
    """The registered sources: provider, hosts, API key variable, tables, what each loads."""
    from scrapers import all_sources, sources_table

    if markdown:
        sys.stdout.write(sources_table())
        return
    rows = [
        {"source": s.name, "provider": s.provider, "api_key_env": s.api_key_env, "api_key_required": s.api_key_required,
         "tables": list(s.tables), "hosts": sorted(s.hosts), "description": s.description, "docs_url": s.docs_url}
        for s in all_sources().values()
    ]  # fmt: skip
    if as_json:
        echo_json(rows)
        return
    columns = ["source", "provider", "key", "tables", "description"]
    key = lambda r: (r["api_key_env"] + (" (required)" if r["api_key_required"] else " (optional)")) if r["api_key_env"] else "none"  # noqa: E731
    print_table(columns, [[r["source"], r["provider"], key(r), ", ".join(r["tables"]), r["description"]] for r in rows])


@app.command()
@handle_errors
def status(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Per source: last run, its age and status, rows loaded and rejected, unknown GPU names.

    Quarantined runs (batches held for inspection, not loaded) are listed with the command that loads them.

    Also flags provider terms (billing, storage, egress) last verified more than 180 days ago.
    """
    from gpucat import catalog, terms
    from warehouse.db import connect

    with connect(db, read_only=True) as con:
        rows = catalog.status(con)
        terms_age = terms.age_by_provider(con)
    for row in rows:
        row.update(terms_age.get(row["provider"], {"terms_verified_on": None, "terms_stale": None}))
    if as_json:
        echo_json(rows)
        return
    columns = ["source", "status", "last run", "age", "last ok", "rows", "rejected", "unknown GPUs", "error", "terms"]
    print_table(
        columns,
        [
            [r["source"], r["status"], r.get("last_run_at"), age(r.get("age_s")), r.get("last_ok_at"), r.get("rows_valid"),
             r.get("rows_rejected"), r.get("unknown_gpus"), r.get("error"),
             f"{r['terms_verified_on'] or ''}{' stale' if r['terms_stale'] else ''}"]
            for r in rows
        ],
    )  # fmt: skip
    for r in rows:
        for run_id in r.get("quarantined_runs") or []:
            typer.echo(f"quarantined: {r['source']} run {run_id} is held for inspection, not loaded; load it with `gpucat accept {run_id}`")
    stale = sorted(provider for provider, a in terms_age.items() if a["terms_stale"])
    if stale:
        typer.echo(f"terms older than {terms.STALE_AFTER_DAYS} days: {', '.join(stale)} (gpucat providers shows them)")


class Market(str, Enum):
    on_demand = "on_demand"
    spot = "spot"


@app.command()
@handle_errors
def offers(
    gpu: Annotated[
        list[str] | None,
        typer.Option("--gpu", "-g", help="GPU model (H100-SXM) or family (H100); repeat or comma-separate."),
    ] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", help="Only these providers; repeat or comma-separate.")] = None,
    min_gpu_memory: Annotated[float | None, typer.Option("--min-gpu-memory", help="Minimum memory per GPU, GB.", min=0)] = None,
    max_price: Annotated[float | None, typer.Option("--max-price", help="Maximum USD per GPU-hour.", min=0)] = None,
    spot: Annotated[bool, typer.Option("--spot", help="Only spot offers.")] = False,
    on_demand: Annotated[bool, typer.Option("--on-demand", help="Only on-demand offers.")] = False,
    available: Annotated[bool, typer.Option("--available", help="Only offers the provider reports in stock.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many rows.", min=1)] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Current offers, cheapest per GPU-hour first."""
    from gpucat import catalog
    from warehouse.db import connect

    if spot and on_demand:
        raise UserInputError("--spot and --on-demand exclude each other")
    with connect(db, read_only=True) as con:
        result = catalog.offers(
            con,
            gpus=_split(gpu),
            providers=_split(provider),
            min_gpu_memory_gb=min_gpu_memory,
            max_usd_per_gpu_hour=max_price,
            market="spot" if spot else "on_demand" if on_demand else None,
            available_only=available,
            limit=limit,
        )
    if as_json:
        print_json_records(result.columns, result.rows)
        return
    shown = {"provider": "provider", "instance_type": "instance", "region": "region", "market": "market", "tier": "tier",
             "gpu_model": "gpu", "gpu_count": "gpus", "gpu_memory_gb": "GB/gpu", "usd_per_hour": "$/h",
             "usd_per_gpu_hour": "$/gpu-h", "availability": "stock", "interconnect": "link", "fabric": "fabric"}  # fmt: skip
    index = [result.columns.index(c) for c in shown]
    print_table(list(shown.values()), [[row[i] for i in index] for row in result.rows])


class SqlFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


@app.command()
@handle_errors
def sql(
    query: Annotated[str, typer.Argument(help="One SQL statement, e.g. \"SELECT * FROM current_offers LIMIT 5\".")],
    output: Annotated[SqlFormat, typer.Option("--format", "-f", help="Output format.")] = SqlFormat.table,
    write: Annotated[bool, typer.Option("--write", help="Open the database writable (default read-only).")] = False,
    db: DbOption = None,
) -> None:
    """Run SQL against the DuckDB file (read-only unless --write)."""
    from gpucat import catalog
    from warehouse.db import connect

    with connect(db, read_only=not write) as con:
        result = catalog.run_sql(con, query)
    if output is SqlFormat.csv:
        print_csv(result.columns, result.rows)
    elif output is SqlFormat.json:
        print_json_records(result.columns, result.rows)
    else:
        print_table(result.columns, result.rows)


@app.command()
@handle_errors
def parse(
    source: Annotated[str, typer.Argument(help="Source name, e.g. aws-pricelist, aws-spot, azure-retail.")],
    files: Annotated[list[Path], typer.Argument(help="Saved response bodies, in the endpoint's own format.")],
) -> None:
    """Print the normalized records of saved response bodies as JSON lines.

    Each line has a `table` field: the destination table (e.g. `offers`), or `rejected_rows`
    with the reasons for a row that would be rejected. URL and fetch time come from the
    capture manifest when the file lives in a capture directory.
    """
    from gpucat import pipeline
    from scrapers import get_source
    from schemas.records import Rejected

    chosen = get_source(source)
    pages = pipeline.pages_from_files(files)
    for item in pipeline.parse_source(chosen, pages):
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
    out: Annotated[Path | None, typer.Option("--out", help="Folder to write snapshot=<timestamp>/ under.")] = None,
    verify: Annotated[
        Path | None, typer.Option("--verify", help="Check an existing snapshot folder against its manifest instead.")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write every table and view as Parquet, with a manifest (rows, schema, sha256 per file)."""
    from gpucat.export import export_snapshot, verify_snapshot
    from warehouse.db import connect

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
    with connect(db, read_only=True) as con:
        snapshot = export_snapshot(con, out)
    if as_json:
        echo_json({"path": str(snapshot.path), **snapshot.manifest})
    else:
        rows = [[r["name"], r["kind"], r["rows"], r["sha256"][:12]] for r in snapshot.manifest["relations"]]
        print_table(["relation", "kind", "rows", "sha256"], rows, title=str(snapshot.path))
