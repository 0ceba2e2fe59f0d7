"""`gpucat serve`: the refresh flow as one Prefect deployment per database, served here.

The deployment is named after the database it writes (`flows.refresh.database_label`: the file's name and a
hash of its absolute path), so two `serve` processes for two databases never take each
other's runs, and it runs at most one refresh at a time: a tick that comes while a refresh
runs is cancelled by the Prefect server (`CANCEL_NEW`), never queued behind the writer lock.
Each group of `schedules.toml` is one schedule of the deployment (its cron, its group as the
run's parameter); a run also takes in the sources of other served groups that are due
(`gpucat.schedules.due_groups`), so a group whose tick was cancelled because another group's
run held the database is not starved. With `--every`, one interval schedule runs every
served group. Flow runs execute in subprocesses of this process, in its working directory and
environment. Nothing here runs at import: the runner imports `flows.refresh` (by module path)
for every run, and a module that started a server on import would start one per run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gpucat.schedules import Group, load_groups, select_groups
from gpucat.schemas.errors import UserInputError
from gpucat.schemas.settings import Settings

# Refreshes of one database at once: one. A tick that finds it running is cancelled, not queued.
MAX_RUNNING_PER_DATABASE = 1


def deployment_parameters(
    group: Group | list[Group], replay_dir: Path | None = None, db_path: Path | str | None = None, schedules_file: Path | None = None
) -> dict[str, object]:
    """The flow parameters of a group's runs (or of several groups' runs together); paths
    absolute so runs do not depend on a cwd.

    The group is named, not its sources: each run reads its sources from the schedules file,
    so a source added to gpucat needs no edit here or in prefect.yaml."""
    return {
        "schedule_group": group.name if isinstance(group, Group) else [g.name for g in group],
        "replay_dir": str(replay_dir.resolve()) if replay_dir else None,
        # A DuckLake URL (a str: see cli/_common.warehouse_target) names no local path.
        "db_path": (db_path if isinstance(db_path, str) else str(db_path.resolve())) if db_path else None,
    } | ({"schedules": str(schedules_file.resolve())} if schedules_file else {})


@dataclass(frozen=True)
class DaskCluster:
    """Where served runs send their steps: the scheduler at `address`, else a local cluster per run."""

    address: str | None = None
    workers: int | None = None

    def environ(self) -> dict[str, str]:
        """What `flows/refresh_dask.py` reads in each run's process (runs inherit this one's environment)."""
        from gpucat.flows.runners import ADDRESS_ENV, WORKERS_ENV

        return {ADDRESS_ENV: self.address or "", WORKERS_ENV: str(self.workers or "")}


# The same flow with a Dask task runner (its cluster read from the environment at import).
DASK_ENTRYPOINT = "gpucat.flows.refresh_dask.refresh"


def deployment(
    groups: list[Group], db_path: Path | str, *, every: float | None = None, replay_dir: Path | None = None, dask: bool = False,
    schedules_file: Path | None = None,
):
    """The database's runner deployment: a cron schedule per group (the group as its run's
    parameter), or one schedule every `every` seconds for all groups at once; at most
    MAX_RUNNING_PER_DATABASE runs at a time, later ticks cancelled."""
    from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
    from prefect.deployments.runner import EntrypointType
    from prefect.schedules import Cron, Interval

    from gpucat.flows.refresh import database_label, refresh

    label = database_label(db_path)
    served = [g.name for g in groups]
    if every:
        schedules = [Interval(every, parameters=deployment_parameters(groups, replay_dir, db_path, schedules_file))]
    else:  # each group's run may take in the other served groups' due sources (coalesce_groups)
        schedules = [Cron(g.cron, "UTC", parameters=deployment_parameters(g, replay_dir, db_path, schedules_file) | {"coalesce_groups": served}) for g in groups]
    made = refresh.to_deployment(
        name=label,
        description=f"gpucat refresh of {db_path}: schedule groups {', '.join(served)}",
        parameters=deployment_parameters(groups, replay_dir, db_path, schedules_file),
        tags=["gpucat", f"db:{label}", *(f"schedule:{name}" for name in served)],
        entrypoint_type=EntrypointType.MODULE_PATH,
        schedules=schedules,
        concurrency_limit=ConcurrencyLimitConfig(limit=MAX_RUNNING_PER_DATABASE, collision_strategy=ConcurrencyLimitStrategy.CANCEL_NEW),
    )
    if dask:  # runs load the flow from the entrypoint: the Dask one, same name and parameters
        made.entrypoint = DASK_ENTRYPOINT
    return made


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
    settings: Settings | None = None,
) -> None:
    """Register every group's deployment on the Prefect API and run their runs until interrupted.

    `settings` are the caller's (`gpucat serve` reads them as it starts; default: this process's
    environment): the schedules file and the default database are resolved from them here, once,
    and handed to the runs as parameters."""
    from prefect import serve as prefect_serve

    if not api_url():
        raise UserInputError(
            "gpucat serve needs a Prefect API: run `prefect server start`, then set PREFECT_API_URL=http://127.0.0.1:4200/api"
        )
    if every is not None and every <= 0:
        raise UserInputError(f"--every must be a positive number of seconds, got {every:g}")
    settings = settings or Settings.from_env()
    schedules_file = config or settings.schedules  # runs get it as a parameter (their freshness budgets)
    chosen = select_groups(load_groups(schedules_file), groups)
    if dask is not None:
        from gpucat.flows.runners import dask_task_runner

        dask_task_runner(dask.address, dask.workers)  # prefect-dask installed, sizes valid: fail now, not per run
        # The Dask entrypoint picks its cluster as it is imported, before any parameter: runs are this
        # process's children and read it from the environment they inherit.
        os.environ.update(dask.environ())
    from gpucat.warehouse.db import db_path as resolve_db_path

    # The default database is resolved here, once: its identity names the deployment.
    target = resolve_db_path(db_path, settings)
    target = target if isinstance(target, str) else target.resolve()
    made = deployment(chosen, target, every=every, replay_dir=replay_dir, dask=dask is not None,
                      schedules_file=Path(schedules_file) if schedules_file else None)
    prefect_serve(made, limit=limit)


def main() -> None:
    """`python -m flows.serve`: serve the shipped schedules (`gpucat serve` has the options)."""
    serve()


if __name__ == "__main__":
    main()
