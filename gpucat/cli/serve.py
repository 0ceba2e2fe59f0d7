"""`gpucat serve`: scheduled refreshes on a Prefect server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpucat.cli._app import app
from gpucat.cli._common import DbOption, cli_settings, handle_errors, split_list
from gpucat.cli._dask import DaskAddressOption, DaskOption, DaskWorkersOption, dask_chosen


@app.command()
@handle_errors
def serve(
    every: Annotated[
        float | None, typer.Option("--every", help="Run every group every this many seconds instead of its cron (tests, demos).", min=1)
    ] = None,
    replay: Annotated[Path | None, typer.Option("--replay", help="Served runs replay this capture directory instead of the network.")] = None,
    db: DbOption = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Schedules file (default: $GPUCAT_SCHEDULES or the one shipped with gpucat).")
    ] = None,
    group: Annotated[
        list[str] | None, typer.Option("--group", help="Serve only these schedule groups (repeat or comma-separate); default all.")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most this many flow runs at once.", min=1)] = None,
    dask: DaskOption = False,
    dask_workers: DaskWorkersOption = None,
    dask_address: DaskAddressOption = None,
) -> None:
    """Serve the refresh flow on a Prefect server: one deployment per database, a schedule per group.

    Needs $PREFECT_API_URL (start one with `prefect server start`). The deployment is named after
    the database, and each group of the schedules file (live-stock hourly, price-lists every 6 h,
    rates daily by default) is one of its schedules; at most one refresh of the database runs at
    a time, and a tick that comes meanwhile is cancelled, not queued. Stop with Ctrl-C. Without --db, runs write
    $GPUCAT_DB, else gpucat.duckdb in the user data directory. With --dask or --dask-address, each run's
    steps run on Dask workers (a temporary local cluster per run, or the scheduler given).
    """
    from gpucat.cli._common import require_extra

    require_extra("prefect", "serve", "gpucat serve")
    from gpucat.flows.serve import DaskCluster
    from gpucat.flows.serve import serve as serve_groups
    from gpucat.scrapers.capture import read_manifest

    if replay is not None:
        read_manifest(replay)  # a missing or malformed capture directory is one clear line, now
    dask_cluster = DaskCluster(dask_address, dask_workers) if dask_chosen(dask, dask_workers, dask_address) else None
    serve_groups(config, every=every, replay_dir=replay, db_path=db, groups=split_list(group), limit=limit, dask=dask_cluster,
                 settings=cli_settings())
