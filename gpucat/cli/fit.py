"""`gpucat fit`: the offers on which a fine-tuning job fits, cheapest configuration first."""

from __future__ import annotations

from typing import Annotated

import typer

from gpucat.cli._app import app
from gpucat.cli._common import (
    DbOption,
    LaunchFormatOption,
    PickOption,
    echo_json,
    handle_errors,
    open_catalog,
    print_launch_spec,
    split_list,
)
from gpucat.cli._render import Col, ColumnsOption, choose, echo_wrapped, jsonable, print_records
from gpucat.cli._train_options import model_of, training_options
from gpucat.schemas.errors import UserInputError

OFFERS = "Offers to consider"


@app.command("fit")
@handle_errors
@training_options(gpus=False, default_sharding="fsdp")
def fit_command(  # type: ignore[no-untyped-def]
    training,
    headroom: Annotated[float, typer.Option("--headroom", rich_help_panel=OFFERS, help="Fraction of each GPU's memory to keep free.")] = 0.1,
    max_gpus: Annotated[int, typer.Option("--max-gpus", rich_help_panel=OFFERS, help="Largest GPU count to consider (1, 2, 4, ... up to it).")] = 64,
    spot: Annotated[bool, typer.Option("--spot", rich_help_panel=OFFERS, help="Only spot offers.")] = False,
    on_demand: Annotated[bool, typer.Option("--on-demand", rich_help_panel=OFFERS, help="Only on-demand offers.")] = False,
    provider: Annotated[list[str] | None, typer.Option("--provider", rich_help_panel=OFFERS, help="Only these providers; repeat or comma-separate.")] = None,
    available: Annotated[bool, typer.Option(
        "--available", rich_help_panel=OFFERS, help="Drop offers reported out of stock (unknown stock, e.g. AWS, stays).",
    )] = False,
    include_stale: Annotated[bool, typer.Option(
        "--include-stale", rich_help_panel=OFFERS, help="Keep offers of sources past their freshness budget (left out by default).",
    )] = False,
    risk: Annotated[str, typer.Option(
        "--risk", rich_help_panel=OFFERS,
        help="safe: fits when the band's top fits | likely: when the estimate fits.",
    )] = "safe",
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many configurations.", min=1)] = 30,
    columns: ColumnsOption = None,
    launch_format: LaunchFormatOption = None,
    pick: PickOption = 1,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
) -> None:
    """List the rented configurations a fine-tuning job fits on, cheapest per hour first.

    For each GPU count the sharding allows (only 1 with --sharding none) it estimates the memory
    per GPU, then finds single instances with that many GPUs, and several identical instances
    where the offer has a multi-node fabric (EFA, InfiniBand). Each row shows the need per GPU
    against the card's memory, and notes where the card lacks bf16 or 4-bit kernels.
    The same answer in SQL: `SELECT * FROM fit_offers(per_gpu_gb := NEED, gpus := N)`.
    """
    from gpucat import availability, suggest
    from gpucat.fit import FitOptions, advice, fit
    from gpucat.freshness import data_age, left_out_note

    if spot and on_demand:
        raise UserInputError("--spot and --on-demand exclude each other")
    if launch_format is not None and as_json:
        raise UserInputError("--format and --json exclude each other")
    shown = choose(FIT_COLUMNS, FIT_DEFAULT, columns)
    suggest.check_providers(split_list(provider))
    arch = model_of(training)
    settings = training.settings(arch)
    options = FitOptions(
        headroom=headroom,
        max_gpus=max_gpus,
        market="spot" if spot else "on_demand" if on_demand else None,
        providers=split_list(provider),
        available_only=available,
        include_stale=include_stale,
        limit=max(limit, pick) if launch_format else limit,
        risk=risk,
    )
    with open_catalog(db) as con:
        result = fit(con, arch, settings, options)
        if launch_format is not None:
            from gpucat.cost.sizes import kept_on_disk_gb
            from gpucat.launch import picked

            print_launch_spec(picked(result.rows, pick), kept_on_disk_gb(arch, settings), launch_format,
                              f"{arch.alias}-{settings.method}", cost=False)
            return
        ages = data_age(con)
        note = availability.available_note(con, options.providers) if available and not as_json else None
        empty_because = None
        if not result.rows:
            count = lambda o: len(fit(con, arch, settings, o).rows)  # noqa: E731
            empty_because = availability.why_empty(options, count, FIT_FILTERS)
    if as_json:
        echo_json(
            {
                "model": arch.name,
                "per_gpu_gb": {str(n): e.per_gpu_gb for n, e in result.estimates.items()},
                "per_gpu_gb_low": {str(n): e.per_gpu_gb_low for n, e in result.estimates.items()},
                "per_gpu_gb_high": {str(n): e.per_gpu_gb_high for n, e in result.estimates.items()},
                "risk": risk,
                "headroom": headroom,
                "stale_sources": result.stale_sources,
                "include_stale": include_stale,
                "data": ages.as_json(),
                "offers": [jsonable(r) for r in result.rows],
            }
        )
        return
    # No-break spaces keep "2 GPUs: 10.7 GB" on one line when the sentence wraps.
    needs = ", ".join(f"{n}\u00a0GPU{'s' if n > 1 else ''}:\u00a0{e.per_gpu_gb:.1f}\u00a0GB" for n, e in result.estimates.items())
    echo_wrapped(f"{arch.name}, {settings.method}: memory per GPU ({settings.sharding}) {needs}")
    if note:
        echo_wrapped(note, err=True)
    stale_note = left_out_note(result.stale_sources, include_stale)
    if stale_note:
        echo_wrapped(stale_note, err=True)
    if not result.rows:
        if empty_because:
            echo_wrapped(f"No current offer fits: {empty_because}.")
        else:
            echo_wrapped(f"No current offer fits. {advice(settings, max_gpus)}")
        if ages.label():
            echo_wrapped(ages.label() or "", err=True)
        return
    print_records(shown, result.rows, title=ages.label())


# Filters in the order an empty answer is explained: (label, FitOptions field, its "off" value).
FIT_FILTERS = (("--provider", "providers", ()), ("--spot/--on-demand", "market", None), ("--available", "available_only", False),
               ("leaving out stale offers (--include-stale keeps them)", "include_stale", True))

FIT_COLUMNS = (
    Col("provider"), Col("instance", get=lambda r: r["instance_type"]), Col("region"), Col("market", shrink=False), Col("tier", shrink=False),
    Col("gpu", get=lambda r: r["gpu_model"], shrink=False), Col("gpus", "GPUs", "count", lambda r: r["gpus_total"]),
    Col("nodes", kind="count"), Col("need", "need GB", "gb", lambda r: round(r["need_gb_per_gpu"], 1)),
    Col("gb", "GB/gpu", "gb", lambda r: r["gpu_memory_gb"]), Col("fit", shrink=False),
    Col("hourly", "$/h", "money", lambda r: r["usd_per_hour_total"]), Col("price", "$/gpu-h", "money", lambda r: r["usd_per_gpu_hour"]),
    Col("stock", get=lambda r: r["availability"], shrink=False), Col("link", get=lambda r: r["interconnect"]), Col("fabric"),
    Col("notes", get=lambda r: "; ".join(r["notes"])), Col("offer_id"), Col("source_url"),
)  # fmt: skip
FIT_DEFAULT = ("provider", "gpu", "gpus", "need", "gb", "fit", "hourly", "market", "tier", "stock", "region", "instance", "notes")
