"""`gpucat accept`: load a quarantined batch deliberately."""

from __future__ import annotations

from typing import Annotated

import typer

from gpucat.cli._app import app
from gpucat.cli._common import DbOption, handle_errors, open_catalog


@app.command()
@handle_errors
def accept(
    run_id: Annotated[str, typer.Argument(help="The quarantined run to load (`gpucat status` lists them).", show_default=False)],
    db: DbOption = None,
) -> None:
    """Load a quarantined run's batch as current truth, after you have checked it.

    A refresh quarantines a batch whose prices or row counts look wrong (a GPU model's median
    moved over 3x, prices outside the catalog's plausible band, many rows rejected, a region or
    file lost rows). Its rows stay in `quarantined_rows` until this command loads them as a new
    run of the source; a run already accepted, or one a newer good run has superseded, is refused.
    """
    from gpucat.warehouse.load import accept_quarantined

    with open_catalog(db, read_only=False) as con:
        run = accept_quarantined(con, run_id)
    typer.echo(f"loaded quarantined run {run_id} of {run.source} as run {run.run_id}: {run.rows_valid} rows")
