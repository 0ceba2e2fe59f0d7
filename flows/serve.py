"""`gpucat serve`: the refresh flow as one Prefect deployment per schedule group, served here.

Each group of `schedules.toml` becomes a deployment named after it, with the group's cron
schedule and its sources as the `providers` parameter. Flow runs execute in subprocesses of
this process, in its working directory and environment. Nothing here runs at import: the
runner imports `flows.refresh` (by module path) for every run, and a module that started a
server on import would start one per run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gpucat.schedules import Group, config_path, load_groups, select_groups
from schemas.errors import UserInputError


def deployment_parameters(group: Group, replay_dir: Path | None = None, db_path: Path | str | None = None) -> dict[str, object]:
    """The flow parameters of a group's runs; paths absolute so runs do not depend on a cwd.

    The group is named, not its sources: each run reads its sources from the schedules file,
    so a source added to gpucat needs no edit here or in prefect.yaml."""
    return {
        "schedule_group": group.name,
        "replay_dir": str(replay_dir.resolve()) if replay_dir else None,
        # A DuckLake URL (a str: see cli/_common.warehouse_target) names no local path.
        "db_path": (db_path if isinstance(db_path, str) else str(db_path.resolve())) if db_path else None,
        "rates_first": True,
    }


@dataclass(frozen=True)
class DaskCluster:
    """Where served runs send their steps: the scheduler at `address`, else a local cluster per run."""

    address: str | None = None
    workers: int | None = None

    def environ(self) -> dict[str, str]:
        """What `flows/refresh_dask.py` reads in each run's process (runs inherit this one's environment)."""
        from flows.runners import ADDRESS_ENV, WORKERS_ENV

        return {ADDRESS_ENV: self.address or "", WORKERS_ENV: str(self.workers or "")}


# The same flow with a Dask task runner (its cluster read from the environment at import).
DASK_ENTRYPOINT = "flows.refresh_dask.refresh"


def deployments(
    groups: list[Group], *, every: float | None = None, replay_dir: Path | None = None, db_path: Path | None = None, dask: bool = False
) -> list:
    """A runner deployment per group: its cron schedule, or every `every` seconds for all."""
    from prefect.deployments.runner import EntrypointType

    from flows.refresh import refresh

    out = []
    for group in groups:
        schedule: dict[str, object] = {"interval": every} if every else {"cron": group.cron}
        out.append(
            refresh.to_deployment(
                name=group.name,
                description=group.description or None,
                parameters=deployment_parameters(group, replay_dir, db_path),
                tags=["gpucat", f"schedule:{group.name}"],
                entrypoint_type=EntrypointType.MODULE_PATH,
                **schedule,
            )
        )
        if dask:  # runs load the flow from the entrypoint: the Dask one, same name and parameters
            out[-1].entrypoint = DASK_ENTRYPOINT
    return out


def api_url() -> str | None:
    from prefect.settings import get_current_settings

    return get_current_settings().api.url


def serve(
    config: Path | None = None,
    *,
    every: float | None = None,
    replay_dir: Path | None = None,
    db_path: Path | None = None,
    groups: list[str] | None = None,
    limit: int | None = None,
    dask: DaskCluster | None = None,
) -> None:
    """Register every group's deployment on the Prefect API and run their runs until interrupted."""
    from prefect import serve as prefect_serve

    if not api_url():
        raise UserInputError(
            "gpucat serve needs a Prefect API: run `prefect server start`, then set PREFECT_API_URL=http://127.0.0.1:4200/api"
        )
    if every is not None and every <= 0:
        raise UserInputError(f"--every must be a positive number of seconds, got {every:g}")
    chosen = select_groups(load_groups(config), groups)
    # Runs are subprocesses of this one: they read the same schedules file (freshness budgets).
    os.environ["GPUCAT_SCHEDULES"] = str(config_path(config).resolve())
    if dask is not None:
        from flows.runners import dask_task_runner

        dask_task_runner(dask.address, dask.workers)  # prefect-dask installed, sizes valid: fail now, not per run
        os.environ.update(dask.environ())
    served = deployments(chosen, every=every, replay_dir=replay_dir, db_path=db_path, dask=dask is not None)
    prefect_serve(*served, limit=limit)


def main() -> None:
    """`python -m flows.serve`: serve the shipped schedules (`gpucat serve` has the options)."""
    serve()


if __name__ == "__main__":
    main()
