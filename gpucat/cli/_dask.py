"""The Dask options `refresh` and `serve` share, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

from gpucat.schemas.errors import UserInputError

DaskOption = Annotated[
    bool, typer.Option("--dask", help="Run the fetch/parse/validate/load steps on a temporary local Dask cluster (needs gpucat[dask]).")
]
DaskWorkersOption = Annotated[
    int | None, typer.Option("--dask-workers", help="Worker processes of the local Dask cluster (default 2); implies --dask.", min=1)
]
DaskAddressOption = Annotated[
    str | None, typer.Option("--dask-address", help="Run the steps on the Dask scheduler at this address (tcp://host:8786).")
]


def dask_chosen(dask: bool, workers: int | None, address: str | None) -> bool:
    """Whether any Dask option was given; --dask-workers only sizes a local cluster."""
    if address and workers:
        raise UserInputError("--dask-workers sizes a local cluster; a cluster at --dask-address has its own workers")
    return bool(dask or workers or address)
