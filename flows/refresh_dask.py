"""Deployment entrypoint `flows/refresh_dask.py:refresh`: the refresh flow on a Dask task runner.

The same flow (same name, parameters and steps) as `flows/refresh.py:refresh`, for prefect.yaml's
workers, which load a flow by its entrypoint: its cluster comes from the worker's settings, read as
the module is imported (the run's edge): GPUCAT_DASK_ADDRESS (a running scheduler, e.g.
tcp://10.0.0.5:8786), else a temporary local cluster of GPUCAT_DASK_WORKERS processes (default 2).
`gpucat serve --dask` does not use it: it serves the flow object with its task runner
(flows/serve.py). Importing it needs prefect-dask (gpucat[dask]).
"""

from __future__ import annotations

from gpucat.flows.refresh import refresh as _refresh
from gpucat.flows.runners import runner_for
from gpucat.schemas.settings import Settings

refresh = _refresh.with_options(task_runner=runner_for(Settings.from_env()))  # this entrypoint is the run's edge
