"""`gpucat cost`: what a whole fine-tuning job costs on each configuration it fits, cheapest first."""

from __future__ import annotations

from typing import Annotated

import typer

from gpucat.cli._app import app
from gpucat.cli._common import (
    DbOption,
    LaunchFormatOption,
    PickOption,
    echo_json,
    finite,
    handle_errors,
    open_catalog,
    print_launch_spec,
    split_list,
)
from gpucat.cli._render import Col, ColumnsOption, choose, echo_text, echo_wrapped, print_records
from gpucat.cli._train_options import model_of, training_options
from gpucat.formats import short_id
from gpucat.schemas.errors import UserInputError

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
    dataset_gb: Annotated[float | None, typer.Option("--dataset-gb", rich_help_panel=JOB_PANEL, show_default=False, callback=finite,
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
        help="Print the arithmetic of one row (its id or offer id).")] = None,
    columns: ColumnsOption = None,
    launch_format: LaunchFormatOption = None,
    pick: PickOption = 1,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON list ranked by total, not a table.")] = False,
    save: Annotated[bool, typer.Option(
        "--save", help="Keep the rows in job_costs (else none).",
    )] = False,
) -> None:
    """Rank the configurations a fine-tuning job fits on by what the whole job costs.

    For each configuration `gpucat fit` finds, it estimates the run time from the model, method
    and GPUs (a FLOPs model calibrated on published throughputs), then adds compute billed in
    the provider's increments, storage for dataset and checkpoints on storage that survives a
    stop (for the run plus --retention), egress for downloading the result, and on spot the
    expected interruptions' lost work and checkpoint writes. Every assumption is printed with
    the answer.
    """
    from gpucat import availability
    from gpucat.cost.parse import duration_hours, token_count
    from gpucat.cost.rank import CostOptions, job_costs
    from gpucat.fit import advice
    from gpucat.freshness import data_age, left_out_note, offer_ages

    if sum((spot, on_demand, both)) > 1:
        raise UserInputError("--spot, --on-demand and --both exclude each other")
    if not tokens:
        raise UserInputError("--tokens is required, e.g. --tokens 200M")
    if launch_format is not None and (as_json or explain is not None):
        raise UserInputError("--format excludes --json and --explain")
    options = CostOptions(
        tokens=token_count(tokens),
        epochs=epochs,
        markets=("spot",) if spot else ("on_demand", "spot") if both else ("on_demand",),
        checkpoint_every_h=duration_hours(checkpoint_every, "--checkpoint-every", default_unit="m"),
        retention_h=duration_hours(retention, "--retention", default_unit="d", allow_zero=True),
        dataset_gb=dataset_gb,
        providers=split_list(provider),
        top=1_000_000 if explain is not None else max(top, pick) if launch_format else top,
        headroom=headroom,
        max_gpus=max_gpus,
        available_only=available,
        include_stale=include_stale,
    )
    shown = choose(COST_COLUMNS, COST_DEFAULT, columns)
    arch = model_of(training)
    settings = training.settings(arch)
    with open_catalog(db) as con:
        result = job_costs(con, arch, settings, options)
        if launch_format is not None:  # the chosen row as a task spec; nothing else printed or saved
            from gpucat.launch import picked

            print_launch_spec(picked(result.rows, pick), result.sizes.storage_gb, launch_format,
                              f"{arch.alias}-{settings.method}", cost=True)
            return
        note = availability.available_note(con, options.providers) if available and not as_json else None
        empty_because = None
        if not result.rows and not as_json:  # from the counts the one pass already has, without asking again
            count = lambda o: min(result.candidates(o, priced_only=True), o.top)  # noqa: E731
            empty_because = availability.why_empty(options, count, COST_FILTERS)
        ages = data_age(con)
        by_offer = offer_ages(con, [(r.provider, r.offer_id) for r in result.rows])
    replay = ages.label()
    if explain is not None:
        _explain(result, explain, replay)
        return
    if save:
        _save(db, arch, settings, options, result)
    stale_note = left_out_note(result.stale_sources, include_stale)
    notes = [*([note] if note else []), *([stale_note] if stale_note else []),
             *([_left_out(result.skipped)] if result.skipped else [])]  # fmt: skip
    if as_json:  # the JSON stays a list of rows; each says how old its offer's data is, the notes go to stderr
        for line in [*notes, *([replay] if replay else [])]:
            typer.echo(f"note: {line}", err=True)
        echo_json([{**row.as_json(), "id": short_id(row.provider, row.offer_id), **by_offer.get((row.provider, row.offer_id), {})}
                   for row in result.rows])  # fmt: skip
        return
    echo_wrapped(f"{arch.name}, {settings.method}: {result.training_tokens:,.0f} training tokens")
    if result.rows:
        print_records(shown, result.rows, title=replay)  # type: ignore[arg-type]
    else:
        if empty_because:
            echo_wrapped(f"No current offer fits with published terms: {empty_because}.")
        else:
            echo_wrapped(f"No current offer fits with published terms. {advice(settings, max_gpus, more=('other providers',))}")
        if replay:
            echo_wrapped(replay, err=True)
    if result.not_costable:
        notes.append(f"{len(result.not_costable)} of {result.offers_in} fitting offers not costed for a missing figure (see 'left out')")
    for line in notes:
        echo_wrapped(line, err=True)
    lines = ["assumed:", *(f"  - {line}" for line in result.defaults)]
    if any(r.near_tie for r in result.rows):
        lines.insert(0, "~ : likely total ranges overlap another row's: a near-tie, not a ranking")
    if any(r.unknown for r in result.rows):
        lines.insert(0, ">= : a lower bound; the parts marked ? are not published by the provider")
    if result.rows:
        lines.insert(0, "--explain ID prints the arithmetic of one row")
    echo_text("\n".join(lines))


def _left_out(skipped: dict[str, list[str]], most: int = 4) -> str:
    """One line for every reason a fitting configuration went unpriced: how many, the first few names."""
    parts = [f"{reason}: {len(names)} ({', '.join(names[:most])}{', …' if len(names) > most else ''})" for reason, names in skipped.items()]
    return "left out " + "; ".join(parts)


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

# Columns of the cost table (a CostRow each). The default keeps the rank key (total $) and the
# short id that --explain takes in the first columns, so a narrow terminal drops the parts instead.
COST_COLUMNS = (
    Col("provider", get=lambda r: r.provider), Col("gpus", "GPUs", get=lambda r: f"{r.gpus} x {r.gpu_model}", shrink=False),
    Col("market", get=lambda r: r.market, shrink=False), Col("hours", "est. hours", "num", lambda r: r.hours),
    Col("compute", "compute $", "money", lambda r: r.compute_usd), Col("storage", "storage $", "money", lambda r: _usd(r.storage_usd)),
    Col("egress", "egress $", "money", lambda r: _usd(r.egress_usd)), Col("spot", "spot $", "money", lambda r: r.spot_overhead_usd),
    Col("total", "total $", "money", _total), Col("range", "likely $", get=_range, shrink=False),
    Col("id", get=lambda r: short_id(r.provider, r.offer_id), shrink=False),
    Col("availability", get=lambda r: r.availability, shrink=False),
    Col("offer", get=lambda r: r.offer_id, shrink=False), Col("region", get=lambda r: r.region), Col("interruptions", get=_spot),
    Col("not_published", "not published", get=lambda r: ", ".join(r.unknown) or "-"),
)  # fmt: skip
COST_DEFAULT = ("provider", "gpus", "market", "hours", "total", "id", "range", "compute", "storage", "egress", "spot", "availability",
                "interruptions", "not_published", "offer")  # fmt: skip


def _explain(result, wanted: str, replay: str | None) -> None:  # noqa: ANN001 - a CostResult
    """The arithmetic of the rows `wanted` names: the table's short id, an offer id, or provider:offer_id."""
    provider, _, offer_id = wanted.strip().rpartition(":")
    matches = [r for r in result.rows
               if wanted.strip().lower() == short_id(r.provider, r.offer_id)
               or (r.offer_id == offer_id and (not provider or r.provider == provider))]  # fmt: skip
    if not matches:
        raise UserInputError(f"offer {wanted!r} is not among the configurations this job fits (see the table's id column)")
    if replay:
        typer.echo(replay)
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
    from gpucat.schemas.errors import GpucatError

    try:
        with open_catalog(db, read_only=False) as con:
            save_job_costs(con, arch, settings, options, result)
    except (GpucatError, duckdb.Error) as exc:
        typer.echo(f"note: not saved to job_costs ({str(exc).splitlines()[0]})", err=True)
