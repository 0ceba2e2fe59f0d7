"""Where the refresh flow runs: Prefect's API, and optionally a Dask cluster (prefect-dask).

Nothing in the flow changes: `refresh.with_options(task_runner=...)` gives the same flow a
`DaskTaskRunner`, so each source's `prepare` task (fetch and parse) runs on a Dask worker, while
the flow body and its `start` and `load` tasks (reference data, run records, joint validation,
the loads) stay in the flow's process, which alone opens the warehouse.

What a worker needs, it gets by value (pickled): the source's name, the fetch options, the last
good run's fetch tokens and the exchange rates; it sends back the parsed rows (or why it has
none) as plain data. So:
- workers must see the flow's filesystem where a fetch uses it: fetched pages are files in the
  run's temporary folder, and replays read (recordings write) their capture directory. A local
  cluster, or workers on the same host, satisfy that; workers on other machines need those
  paths on a shared mount.
- workers in other processes report their task runs to the flow's Prefect API. With no
  PREFECT_API_URL, `prefect_api()` starts Prefect's temporary local server once and points the
  workers at it, instead of each worker starting its own.

`gpucat refresh` (when tracked) uses `run_refresh`; `gpucat serve --dask` serves the flow object
with its `dask_task_runner` (flows/serve.py); prefect.yaml's workers use the entrypoint
`flows/refresh_dask.py:refresh`, whose cluster the worker's settings name (`runner_for`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gpucat.schemas.errors import UserInputError
from gpucat.schemas.settings import Settings

DEFAULT_WORKERS = 2
# How long Prefect's temporary server may take to start: its default (20 s) is too short on a
# loaded machine, where a first start also migrates Prefect's own database.
STARTUP_TIMEOUT_S = 120


def dask_task_runner(address: str | None = None, workers: int | None = None, *, processes: bool = True) -> Any:
    """A `DaskTaskRunner` on the scheduler at `address`, else on a temporary local cluster.

    The local cluster has `workers` single-threaded workers (separate processes unless
    `processes=False`); the flow run starts it and tears it down.
    """
    try:
        import prefect_dask  # noqa: F401
    except ImportError:
        raise UserInputError("the Dask task runner needs prefect-dask: install gpucat[dask] (uv sync --extra dask)") from None
    from prefect_dask import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    workers = DEFAULT_WORKERS if workers is None else workers
    if workers < 1:
        raise UserInputError(f"a Dask cluster needs at least one worker, got {workers}")
    return DaskTaskRunner(cluster_kwargs=local_cluster_kwargs(workers, processes=processes))


def local_cluster_kwargs(workers: int, *, processes: bool = True) -> dict[str, Any]:
    """A `distributed.LocalCluster` on loopback with `workers` single-threaded workers and no dashboard.

    One thread per worker: a worker runs one step at a time, and parallelism is the worker count.
    The scheduler's HTTP server still listens (health checks), on a free loopback port rather than
    8787, which a second cluster (two served runs at once) would find taken.
    """
    return {
        "n_workers": workers,
        "threads_per_worker": 1,
        "processes": processes,
        "host": "127.0.0.1",
        "dashboard_address": None,
        "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"},
    }


def runner_for(settings: Settings) -> Any:
    """The task runner a deployment's run uses: $GPUCAT_DASK_ADDRESS, else a local cluster
    ($GPUCAT_DASK_WORKERS workers), as the run's settings say."""
    return dask_task_runner(settings.dask_address, settings.dask_workers)


@contextmanager
def prefect_api() -> Iterator[str]:
    """The Prefect API every process of the run talks to: $PREFECT_API_URL, else a temporary local server.

    Without it, each Dask worker process would start its own temporary server on Prefect's
    database. The temporary server is Prefect's own (the one a flow run starts when no API is
    configured); it stops when this process exits.
    """
    from prefect.settings import PREFECT_API_URL, temporary_settings

    url = PREFECT_API_URL.value()
    if url:
        yield url
        return
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    server.start(timeout=STARTUP_TIMEOUT_S)
    previous = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = server.api_url  # worker processes inherit it at spawn
    try:
        with temporary_settings(updates={PREFECT_API_URL: server.api_url}):
            yield server.api_url
    finally:
        if previous is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = previous


def run_refresh(task_runner: Any = None, **parameters: Any) -> Any:
    """Run the refresh flow (on `task_runner`, e.g. `dask_task_runner()`, else Prefect's default
    threads) and return its final state. A temporary API server gets `STARTUP_TIMEOUT_S` to start;
    with $PREFECT_API_URL set none starts, and Prefect's settings are left as they are (copying
    them costs tens of milliseconds)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS as TIMEOUT

    from gpucat.flows.refresh import refresh

    flow = refresh if task_runner is None else refresh.with_options(task_runner=task_runner)
    if PREFECT_API_URL.value():
        return flow(**parameters, return_state=True)
    with temporary_settings(updates={TIMEOUT: max(TIMEOUT.value(), STARTUP_TIMEOUT_S)}):
        if task_runner is None:
            return flow(**parameters, return_state=True)
        with prefect_api():
            return flow(**parameters, return_state=True)
