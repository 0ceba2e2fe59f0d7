"""`gpucat cost`: what a whole fine-tuning job costs on each configuration it fits, cheapest first."""

from __future__ import annotations

from typing import Annotated

import typer

from gpucat.cli import app
from gpucat.cli._common import echo_json, handle_errors
from gpucat.cli._render import Col, ColumnsOption, choose, echo_text, echo_wrapped, print_records
from gpucat.cli._common import DbOption, split_list
from gpucat.cli._train_options import training_options
from schemas.errors import UserInputError

JOB_PANEL = "The job"
OFFERS_PANEL = "Offers to consider"


@app.command("cost")
@handle_errors
@training_options(gpus=False, default_sharding="fsdp")
def cost_command(  # type: ignore[no-untyped-def]
    training,
    tokens: Annotated[str, typer.Option("--tokens", "-t", rich_help_panel=JOB_PANEL, show_default=False,
        help="Training tokens in one epoch: 200M, 1.5B, 500k.")] = "",
    epochs: Annotated[float, typer.Option("--epochs", rich_help_panel=JOB_PANEL, help="Passes over the tokens.")] = 1.0,
    spot: Annotated[bool, typer.Option("--spot", rich_help_panel=OFFERS_PANEL, help="Only spot offers.")] = False,
    on_demand: Annotated[bool, typer.Option("--on-demand", rich_help_panel=OFFERS_PANEL, help="Only on-demand offers (the default).")] = False,
    both: Annotated[bool, typer.Option("--both", rich_help_panel=OFFERS_PANEL, help="Spot and on-demand offers.")] = False,
    checkpoint_every: Annotated[str, typer.Option("--checkpoint-every", rich_help_panel=JOB_PANEL,
        help="Spot checkpoint interval (30m, 1h); half is lost per interruption.")] = "30m",
    retention: Annotated[str, typer.Option("--retention", rich_help_panel=JOB_PANEL,
        help="How long dataset and checkpoints stay stored after the run (7d, 12h, 0).")] = "7d",
    dataset_gb: Annotated[float | None, typer.Option("--dataset-gb", rich_help_panel=JOB_PANEL, show_default=False,
        help="Dataset size in GB (default: the tokens as text, 4 bytes a token).")] = None,
    provider: Annotated[list[str] | None, typer.Option("--provider", "-p", rich_help_panel=OFFERS_PANEL,
        help="Only these providers; repeat or comma-separate.")] = None,
    available: Annotated[bool, typer.Option(
        "--available", rich_help_panel=OFFERS_PANEL, help="Drop offers reported out of stock (unknown stock, e.g. AWS, stays).",
    )] = False,
    include_stale: Annotated[bool, typer.Option(
        "--include-stale", rich_help_panel=OFFERS_PANEL, help="Keep offers of sources past their freshness budget.",
    )] = False,
    headroom: Annotated[float, typer.Option("--headroom", rich_help_panel=OFFERS_PANEL, help="Fraction of each GPU's memory to keep free.")] = 0.1,
    max_gpus: Annotated[int, typer.Option("--max-gpus", rich_help_panel=OFFERS_PANEL, help="Largest GPU count to consider (1, 2, 4, ... up to it).")] = 64,
    top: Annotated[int, typer.Option("--top", "-n", help="Show the cheapest N configurations.")] = 20,
    explain: Annotated[str | None, typer.Option("--explain", show_default=False,
        help="Print the arithmetic for one offer id (or provider:offer_id).")] = None,
    columns: ColumnsOption = None,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list ranked by total instead of a table.")] = False,
) -> None:
    """Rank the configurations a fine-tuning job fits on by what the whole job costs.

    For each configuration `gpucat fit` finds, it estimates the run time from the model, method
    and GPUs (a FLOPs model calibrated on published throughputs), then adds compute billed in
    the provider's increments, storage for dataset and checkpoints on storage that survives a
    stop (for the run plus --retention), egress for downloading the result, and on spot the
    expected interruptions' lost work and checkpoint writes. Every assumption is printed with
    the answer. The rows are saved to the database: SELECT * FROM latest_job_costs.
    """
    from gpucat import availability
    from gpucat.freshness import left_out_note
    from gpucat.cost.parse import duration_hours, token_count
    from gpucat.cost.rank import CostOptions, job_costs
    from warehouse.db import connect

    if sum((spot, on_demand, both)) > 1:
        raise UserInputError("--spot, --on-demand and --both exclude each other")
    if not tokens:
        raise UserInputError("--tokens is required, e.g. --tokens 200M")
    options = CostOptions(
        tokens=token_count(tokens),
        epochs=epochs,
        markets=("spot",) if spot else ("on_demand", "spot") if both else ("on_demand",),
        checkpoint_every_h=duration_hours(checkpoint_every, "--checkpoint-every", default_unit="m"),
        retention_h=duration_hours(retention, "--retention", default_unit="d", allow_zero=True),
        dataset_gb=dataset_gb,
        providers=split_list(provider),
        top=top if explain is None else 1_000_000,
        headroom=headroom,
        max_gpus=max_gpus,
        available_only=available,
        include_stale=include_stale,
    )
    shown = choose(COST_COLUMNS, COST_DEFAULT, columns)
    arch = training.arch()
    settings = training.settings(arch)
    with connect(db, read_only=True) as con:
        result = job_costs(con, arch, settings, options)
        note = availability.available_note(con, options.providers) if available and not as_json else None
        empty_because = None
        if not result.rows and not as_json:
            count = lambda o: len(job_costs(con, arch, settings, o).rows)  # noqa: E731
            empty_because = availability.why_empty(options, count, COST_FILTERS)
    if explain is not None:
        _explain(result, explain)
        return
    _save(db, arch, settings, options, result)
    stale_note = left_out_note(result.stale_sources, include_stale)
    if as_json:
        if stale_note:  # the JSON stays a plain list of rows; the note goes where a script's log goes
            typer.echo(f"note: {stale_note}", err=True)
        echo_json([row.as_json() for row in result.rows])
        return
    echo_wrapped(f"{arch.name}, {settings.method}: {result.training_tokens:,.0f} training tokens")
    if note:
        echo_wrapped(note)
    if stale_note:
        echo_wrapped(stale_note)
    if result.rows:
        print_records(shown, result.rows)  # type: ignore[arg-type]
    elif empty_because:
        echo_wrapped(f"No current offer fits with published terms: {empty_because}.")
    else:
        echo_wrapped("No current offer fits with published terms. Try more GPUs (--max-gpus), qlora, or other providers.")
    notes = [f"left out ({reason}): {', '.join(names)}" for reason, names in result.skipped.items()]
    if result.not_costable:
        notes.append(f"{len(result.not_costable)} of {result.offers_in} fitting offers not costed, for the reasons above")
    if any(r.near_tie for r in result.rows):
        notes.append("~ : likely total ranges overlap another row's: a near-tie, not a ranking")
    if any(r.unknown for r in result.rows):
        notes.append(">= : a lower bound; the parts marked ? are not published by the provider")
    echo_text("\n".join([*notes, "assumed:", *(f"  - {line}" for line in result.defaults)]))


def _usd(value: float | None) -> str | float:
    return "?" if value is None else value


def _total(r) -> str:  # noqa: ANN001 - a CostRow
    from gpucat.formats import money

    return (">=" if r.unknown and r.unknown != ("billing increment",) else "") + money(r.total_usd)


def _range(r) -> str:  # noqa: ANN001 - a CostRow
    low, high = r.total_range
    digits = 2 if high < 100 else 0
    return ("~" if r.near_tie else "") + f"{low:,.{digits}f}-{high:,.{digits}f}"


def _spot(r) -> str:  # noqa: ANN001 - a CostRow
    return "-" if r.interruption_label is None else f"{r.expected_interruptions:.2g} ({r.interruption_label})"


# Filters in the order an empty answer is explained: (label, CostOptions field, its "off" value).
COST_FILTERS = (("--provider", "providers", ()), ("the market (--spot/--on-demand/--both)", "markets", ("on_demand", "spot")),
                ("--available", "available_only", False),
                ("leaving out stale sources (--include-stale keeps them)", "include_stale", True))  # fmt: skip

# Columns of the cost table (a CostRow each); the compact default fits 100 columns.
COST_COLUMNS = (
    Col("provider", get=lambda r: r.provider), Col("gpus", "GPUs", get=lambda r: f"{r.gpus} x {r.gpu_model}", shrink=False),
    Col("market", get=lambda r: r.market, shrink=False), Col("hours", "est. hours", "num", lambda r: r.hours),
    Col("compute", "compute $", "money", lambda r: r.compute_usd), Col("storage", "storage $", "money", lambda r: _usd(r.storage_usd)),
    Col("egress", "egress $", "money", lambda r: _usd(r.egress_usd)), Col("spot", "spot $", "money", lambda r: r.spot_overhead_usd),
    Col("total", "total $", "money", _total), Col("range", "likely $", get=_range, shrink=False), Col("availability", get=lambda r: r.availability, shrink=False),
    Col("offer", get=lambda r: r.offer_id), Col("region", get=lambda r: r.region), Col("interruptions", get=_spot),
    Col("not_published", "not published", get=lambda r: ", ".join(r.unknown) or "-"),
)  # fmt: skip
COST_DEFAULT = ("provider", "gpus", "market", "hours", "compute", "storage", "egress", "spot", "total", "range", "availability",
                "interruptions", "not_published", "offer")  # fmt: skip


def _explain(result, wanted: str) -> None:  # noqa: ANN001 - a CostResult
    provider, _, offer_id = wanted.rpartition(":")
    matches = [r for r in result.rows if r.offer_id == offer_id and (not provider or r.provider == provider)]
    if not matches:
        raise UserInputError(f"offer {wanted!r} is not among the configurations this job fits (see the table's offers)")
    for row in matches:
        for line in row.lines:
            typer.echo(line)
        typer.echo("")
    typer.echo("assumed:")
    for line in result.defaults:
        typer.echo(f"  {line}")


def _save(db, arch, settings, options, result) -> None:  # noqa: ANN001
    """Keep the answer for SQL users; a database that cannot be written only costs a warning."""
    import duckdb

    from gpucat.cost.rank import save_job_costs
    from schemas.errors import GpucatError
    from warehouse.db import connect

    try:
        with connect(db) as con:
            save_job_costs(con, arch, settings, options, result)
    except (GpucatError, duckdb.Error) as exc:
        typer.echo(f"note: not saved to job_costs ({str(exc).splitlines()[0]})", err=True)
