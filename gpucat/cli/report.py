"""`gpucat report`: one HTML file with charts of prices, availability and history (opens offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpucat.cli._app import app
from gpucat.cli._common import DbOption, JsonOption, clock_now, echo_json, handle_errors, open_catalog
from gpucat.cli._train_options import model_of, training_options

JOB = "Job (optional: the fit ranking)"


@app.command("report")
@handle_errors
@training_options(gpus=False, default_sharding="fsdp")
def report_command(  # type: ignore[no-untyped-def]
    training,
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write.")] = Path("report.html"),
    tokens: Annotated[str | None, typer.Option(
        "--tokens", "-t", show_default=False, rich_help_panel=JOB,
        help="Training tokens (200M, 1.5B): adds the ranking by what the whole job costs.",
    )] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, rich_help_panel=JOB, help="Configurations in the fit ranking.")] = 25,
    include_stale: Annotated[bool, typer.Option(
        "--include-stale", help="Keep offers of sources past their freshness budget (left out by default, as in fit and cost).",
    )] = False,
    window_days: Annotated[float, typer.Option(
        "--window-days", help="How many days back the price-history chart reaches (its cost follows the changes in them).",
    )] = 90,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write one self-contained HTML report: price spread per GPU, $/GB, stock, price history.

    Every script and style is inline, so the file opens offline. With --model and --method it
    adds where that fine-tuning job fits, ranked by hourly price, and with --tokens what the whole
    job costs on each configuration (as `gpucat cost` computes it), each as a chart and a table.
    """
    from gpucat.cli._common import require_extra

    require_extra("plotly", "report", "gpucat report")
    from gpucat import report
    from gpucat.freshness import data_age

    with open_catalog(db) as con:
        job = None
        if training.model or training.config:
            arch = model_of(training)
            from gpucat.cost import CostOptions, job_costs
            from gpucat.cost.parse import token_count

            settings = training.settings(arch)
            count = token_count(tokens) if tokens else None
            # What the whole job costs, on demand and spot, as `gpucat cost` computes it with its defaults.
            costs = job_costs(con, arch, settings, CostOptions(tokens=count, markets=("on_demand", "spot"), top=limit,
                                                               include_stale=include_stale)).rows if count else []  # fmt: skip
            job = report.fit_job(con, arch, settings, limit=limit, costs=costs, tokens=count, include_stale=include_stale)
        data = report.collect(con, job, clock_now(), include_stale=include_stale, window_days=window_days)
        replayed = data_age(con).as_json()
    path = report.write_report(out, data)
    summary = {"path": str(path), "bytes": path.stat().st_size, "gpu_models": len(report.headline(data.spread)),
               "offers": sum(r["offers"] for r in data.spread), "fit_rows": len(job.rows) if job else None,
               "cost_rows": len(job.costs) if job else None, "include_stale": include_stale, "data": replayed}  # fmt: skip
    if as_json:
        echo_json(summary)
    else:
        if data.replay:  # the page carries it as a banner; the terminal gets it as a note
            typer.echo(f"note: {data.replay}", err=True)
        typer.echo(f"wrote {path} ({summary['bytes'] / 1e6:.1f} MB, {summary['gpu_models']} GPU models"
                   + (f", {summary['fit_rows']} fitting configurations" if job else "")
                   + (f", {summary['cost_rows']} job costs" if job and job.costs else "") + ")")  # fmt: skip
