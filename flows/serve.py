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
environment. The runner runs the flow object it is handed (Prefect's in-memory serve path), so
a run on Dask gets its task runner from `serve`'s arguments, not from variables its process
would have to read. Nothing here runs at import: each run's process unpickles the flow and
imports `flows.refresh`, and a module that started a server on import would start one per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def served_flow(dask: DaskCluster | None = None) -> Any:
    """The flow served runs execute: the refresh flow, on a Dask task runner when `dask` is given
    (same name, parameters and steps). Fails now, not per run, when prefect-dask is missing or a
    size is invalid."""
    from gpucat.flows.refresh import refresh

    if dask is None:
        return refresh
    from gpucat.flows.runners import dask_task_runner

    return refresh.with_options(task_runner=dask_task_runner(dask.address, dask.workers))


def deployment_options(
    groups: list[Group], db_path: Path | str, *, every: float | None = None, replay_dir: Path | None = None,
    schedules_file: Path | None = None,
) -> dict[str, Any]:
    """The database's deployment, as Prefect's `to_deployment`/`Runner.add_flow` take it: a cron
    schedule per group (the group as its run's parameter), or one schedule every `every` seconds
    for all groups at once; at most MAX_RUNNING_PER_DATABASE runs at a time, later ticks cancelled."""
    from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
    from prefect.deployments.runner import EntrypointType
    from prefect.schedules import Cron, Interval

    from gpucat.flows.refresh import database_label

    label = database_label(db_path)
    served = [g.name for g in groups]
    if every:
        schedules = [Interval(every, parameters=deployment_parameters(groups, replay_dir, db_path, schedules_file))]
    else:  # each group's run may take in the other served groups' due sources (coalesce_groups)
        schedules = [Cron(g.cron, "UTC", parameters=deployment_parameters(g, replay_dir, db_path, schedules_file) | {"coalesce_groups": served}) for g in groups]
    return {
        "name": label,
        "description": f"gpucat refresh of {db_path}: schedule groups {', '.join(served)}",
        "parameters": deployment_parameters(groups, replay_dir, db_path, schedules_file),
        "tags": ["gpucat", f"db:{label}", *(f"schedule:{name}" for name in served)],
        "entrypoint_type": EntrypointType.MODULE_PATH,
        "schedules": schedules,
        "concurrency_limit": ConcurrencyLimitConfig(limit=MAX_RUNNING_PER_DATABASE, collision_strategy=ConcurrencyLimitStrategy.CANCEL_NEW),
    }


def deployment(groups: list[Group], db_path: Path | str, *, dask: DaskCluster | None = None, **options: Any) -> Any:
    """The database's runner deployment of `served_flow(dask)` (what `serve` registers), to inspect."""
    return served_flow(dask).to_deployment(**deployment_options(groups, db_path, **options))


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
    settings: Settings,
) -> None:
    """Register every group's deployment on the Prefect API and run their runs until interrupted.

    `settings` are the caller's (`gpucat serve` reads them as it starts): the schedules file and
    the default database are resolved from them here, once, and handed to the runs as parameters."""
    if not api_url():
        raise UserInputError(
            "gpucat serve needs a Prefect API: run `prefect server start`, then set PREFECT_API_URL=http://127.0.0.1:4200/api"
        )
    if every is not None and every <= 0:
        raise UserInputError(f"--every must be a positive number of seconds, got {every:g}")
    schedules_file = config or settings.schedules  # runs get it as a parameter (their freshness budgets)
    chosen = select_groups(load_groups(schedules_file), groups)
    flow = served_flow(dask)  # the runner runs this object in each run's process (its task runner included)
    from gpucat.warehouse.db import db_path as resolve_db_path

    # The default database is resolved here, once: its identity names the deployment.
    target = resolve_db_path(db_path, settings)
    target = target if isinstance(target, str) else target.resolve()
    options = deployment_options(chosen, target, every=every, replay_dir=replay_dir,
                                 schedules_file=Path(schedules_file) if schedules_file else None)
    # `Flow.serve` is Prefect's runner on the in-memory flow (`Runner.add_flow`): its deployment limit is
    # called global_limit there, and `limit` caps this runner's runs at once.
    flow.serve(global_limit=options.pop("concurrency_limit"), limit=limit, **options)


def main() -> None:
    """`python -m flows.serve`: serve the shipped schedules (`gpucat serve` has the options)."""
    serve(settings=Settings.from_env())  # this entry point is an edge: the settings are read here


if __name__ == "__main__":
    main()
