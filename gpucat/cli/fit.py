"""`gpucat fit`: the offers on which a fine-tuning job fits, cheapest configuration first."""

from __future__ import annotations

from typing import Annotated

import typer

from gpucat.cli import app
from gpucat.cli._common import echo_json, handle_errors
from gpucat.cli._render import print_table
from gpucat.cli.catalog import DbOption, _split
from gpucat.cli._train_options import training_options
from schemas.errors import UserInputError


@app.command("fit")
@handle_errors
@training_options(gpus=False, default_sharding="fsdp")
def fit_command(  # type: ignore[no-untyped-def]
    training,
    headroom: Annotated[float, typer.Option("--headroom", help="Fraction of each GPU's memory to keep free.")] = 0.1,
    max_gpus: Annotated[int, typer.Option("--max-gpus", help="Largest GPU count to consider (1, 2, 4, ... up to it).")] = 64,
    spot: Annotated[bool, typer.Option("--spot", help="Only spot offers.")] = False,
    on_demand: Annotated[bool, typer.Option("--on-demand", help="Only on-demand offers.")] = False,
    provider: Annotated[list[str] | None, typer.Option("--provider", help="Only these providers; repeat or comma-separate.")] = None,
    available: Annotated[bool, typer.Option("--available", help="Only offers the provider reports in stock.")] = False,
    include_stale: Annotated[
        bool, typer.Option("--include-stale", help="Keep offers of sources past their freshness budget (left out by default).")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many configurations.", min=1)] = 30,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
) -> None:
    """List the rented configurations a fine-tuning job fits on, cheapest per hour first.

    For each GPU count the sharding allows (only 1 with --sharding none) it estimates the memory
    per GPU, then finds single instances with that many GPUs, and several identical instances
    where the offer has a multi-node fabric (EFA, InfiniBand). Each row shows the need per GPU
    against the card's memory, and notes where the card lacks bf16 or 4-bit kernels.
    The same answer in SQL: SELECT * FROM fit_offers(per_gpu_gb := <need>, gpus := <n>).
    """
    from gpucat.fit import FitOptions, fit
    from gpucat.freshness import left_out_note
    from warehouse.db import connect

    if spot and on_demand:
        raise UserInputError("--spot and --on-demand exclude each other")
    arch = training.arch()
    settings = training.settings(arch)
    options = FitOptions(
        headroom=headroom,
        max_gpus=max_gpus,
        market="spot" if spot else "on_demand" if on_demand else None,
        providers=_split(provider),
        available_only=available,
        include_stale=include_stale,
        limit=limit,
    )
    with connect(db, read_only=True) as con:
        result = fit(con, arch, settings, options)
    if as_json:
        echo_json(
            {
                "model": arch.name,
                "per_gpu_gb": {str(n): e.per_gpu_gb for n, e in result.estimates.items()},
                "per_gpu_gb_high": {str(n): e.per_gpu_gb_high for n, e in result.estimates.items()},
                "headroom": headroom,
                "stale_sources": result.stale_sources,
                "include_stale": include_stale,
                "offers": result.rows,
            }
        )
        return
    needs = ", ".join(f"{n} GPU{'s' if n > 1 else ''}: {e.per_gpu_gb:.1f} GB" for n, e in result.estimates.items())
    typer.echo(f"{arch.name}, {settings.method}: memory per GPU ({settings.sharding}) {needs}")
    stale_note = left_out_note(result.stale_sources, include_stale)
    if stale_note:
        typer.echo(stale_note)
    if not result.rows:
        typer.echo("No current offer fits. Try more GPUs (--max-gpus), sharding, qlora, or checkpointing.")
        return
    columns = ["provider", "instance", "region", "market", "gpu", "GPUs", "nodes", "need GB/gpu", "GB/gpu", "fit", "$/h", "stock", "notes"]
    print_table(
        columns,
        [
            [r["provider"], r["instance_type"], r["region"], r["market"] + (f" ({r['tier']})" if r["tier"] else ""),
             r["gpu_model"], r["gpus_total"], r["nodes"], round(r["need_gb_per_gpu"], 1), r["gpu_memory_gb"],
             r["fit"], round(r["usd_per_hour_total"], 2), r["availability"], "; ".join(r["notes"])]
            for r in result.rows
        ],
    )  # fmt: skip
