"""The `refresh` flow: `gpucat.pipeline.refresh_sources`, its steps run as Prefect tasks.

The flow does not wire the refresh itself: the one orchestrator does, and the flow hands it
`TaskSteps`, which run each step as a task, coarse enough that tracking costs little beside
the work: `start` (reference data, prerequisites, the runs' records), one `load` per burst of
ready sources (joint validation, then the loads in one opening of the warehouse; its logs say
each source's outcome), and on a Dask task runner one `prepare` per source (fetch and parse, the
warehouse closed), which is how a preparation reaches a worker. On Prefect's default thread pool
the preparations run on the in-process runner's threads instead (`TaskSteps`). Nothing is
persisted as a Prefect result: the warehouse is the record, and the run's artifact is its
summary. HTTP retries happen per request inside the fetch; no task is retried.
A failing source never stops the others; the flow ends Failed, naming the sources that failed,
while the others' data is loaded.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext
from prefect.futures import PrefectFuture
from prefect.runtime import flow_run
from prefect.states import Completed, Failed, State
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from gpucat import pipeline
from gpucat.schemas.settings import Settings
from gpucat.scrapers import get_source, select_sources
from gpucat.scrapers.base import Source
from gpucat.scrapers.conditional import FetchTokens
from gpucat.scrapers.normalize import ExchangeRates
from gpucat.warehouse import db
from gpucat.warehouse.load import RunRecord

# Tasks keep no result (nobody reads one back) and no cache. A load's inputs (the parsed rows)
# are `quote`d, so Prefect does not walk every row looking for futures; a load runs in the flow's
# process, where Prefect unwraps them.
_TASK = {"cache_policy": NO_CACHE, "persist_result": False}


@task(name="start", **_TASK)
def start_task(writer: db.Writer, sources: Sequence[Source], options: pipeline.FetchOptions, prerequisites: bool, flow_run_id: str | None) -> pipeline.Started:
    return pipeline.start_refresh(writer, sources, options, prerequisites, flow_run_id)


@task(name="prepare", task_run_name="prepare-{source_name}", **_TASK)
def prepare_task(source_name: str, options: pipeline.FetchOptions, previous: FetchTokens | None, rates: ExchangeRates) -> pipeline.Outcome:
    return pipeline.prepare_source(get_source(source_name), options, previous, rates)


@task(name="load", **_TASK)
def load_task(writer: db.Writer, ready: Sequence[pipeline.Prepared], fallbacks: Sequence[tuple[Source, RunRecord]], read_rates: bool) -> tuple:
    loaded, rates = pipeline.load_prepared(writer, ready, fallbacks, read_rates=read_rates)
    for run in loaded:  # each source's outcome, in this task run's logs
        print(outcome_line(pipeline.summary_row(run)))
    return loaded, rates


def outcome_line(row: dict[str, Any]) -> str:
    """One source's outcome as a log line: `name status, N rows valid` and its error, if any."""
    error = f": {row['error']}" if row["error"] else ""
    return f"{row['source']} {row['status']}, {row['rows_valid'] or 0} rows valid, {row['rows_rejected'] or 0} rejected{error}"


def burst_name(names: Sequence[str], shown: int = 3) -> str:
    """A load's task run name: the sources of its burst, the first few by name."""
    more = f"+{len(names) - shown}" if len(names) > shown else ""
    return f"load-{','.join(names[:shown])}{more}"


class TaskSteps(pipeline.Steps):
    """The orchestrator's steps as this flow's tasks, on the flow's task runner (threads, or Dask).

    `start` and `load` run in the flow's process: the runs recorded `running` name the process
    whose death leaves them, and the warehouse is written from one place. With `prepare_as_tasks`
    (a Dask runner) each preparation is submitted to the task runner, the source by name, its
    outcome as plain data. Without it (Prefect's thread pool) preparations run on the in-process
    runner's bounded threads (`pipeline.Steps.prepare`): a task run per source cost more than its
    work on a replay (task engine, three state events each for the API to take in, one thread
    each in Prefect's unbounded pool), and its outcome is already in its burst's `load` logs and
    the summary artifact."""

    def __init__(self, *, prepare_as_tasks: bool):
        super().__init__()
        self.prepare_as_tasks = prepare_as_tasks

    def start(self, writer: db.Writer, sources: Sequence[Source], options: pipeline.FetchOptions, prerequisites: bool, flow_run_id: str | None) -> pipeline.Started:
        return start_task(writer, sources, options, prerequisites, flow_run_id)

    def prepare(self, source: Source, options: pipeline.FetchOptions, previous: FetchTokens | None, rates: ExchangeRates) -> Future[pipeline.Outcome]:
        if not self.prepare_as_tasks:
            return super().prepare(source, options, previous, rates)
        return _bridged(prepare_task.submit(source.name, options, previous, rates))

    def load(self, writer: db.Writer, ready: Sequence[pipeline.Prepared], fallbacks: Sequence[tuple[Source, RunRecord]], read_rates: bool) -> tuple:
        names = [p.source.name for p in ready] + [f.name for f, _ in fallbacks]
        return load_task.with_options(task_run_name=burst_name(names))(writer, quote(ready), quote(fallbacks), read_rates)


def preparations_as_tasks() -> bool:
    """Whether this flow run's task runner needs each preparation as a task: any but Prefect's thread pool."""
    context = FlowRunContext.get()
    return not (context is None or isinstance(context.task_runner, ThreadPoolTaskRunner))


def _bridged(submitted: PrefectFuture[Any]) -> Future[Any]:
    """A task runner's future as a `concurrent.futures.Future`, which the orchestrator gathers."""
    out: Future[Any] = Future()

    def settle(done: PrefectFuture[Any]) -> None:
        try:
            out.set_result(done.result())
        except BaseException as exc:  # noqa: BLE001 - the orchestrator records it as the source's failure
            out.set_exception(exc)

    submitted.add_done_callback(settle)
    return out


def database_label(db_path: Path | str) -> str:
    """A database's identity in deployment names, tags and artifact keys: its file name and a
    hash of its absolute path (or of a DuckLake URL as typed), in lower-case letters, digits
    and dashes, so two databases with one file name still differ."""
    where = db_path if isinstance(db_path, str) else str(Path(db_path).resolve())
    stem = Path(db_path).stem if isinstance(db_path, Path) else "lake"
    return f"{re.sub(r'[^a-z0-9]+', '-', stem.lower()).strip('-')[:32] or 'db'}-{hashlib.sha256(where.encode()).hexdigest()[:8]}"


@flow(name="refresh", log_prints=True, persist_result=False)
def refresh(
    providers: list[str] | None = None,
    replay_dir: str | None = None,
    record_dir: str | None = None,
    db_path: str | None = None,
    schedule_group: str | list[str] | None = None,
    coalesce_groups: list[str] | None = None,
    schedules: str | None = None,
) -> State:
    """Refresh the catalog from every selected source into the DuckDB file.

    providers: providers or source names to refresh (default: every registered source); the rate
        sources join them while the warehouse holds no exchange rates (the refresh's prerequisites).
    replay_dir: a capture directory to replay instead of the network (e.g. the repo's fixtures).
    record_dir: a directory to keep every fetched response in, as a capture.
    db_path: the DuckDB file (default: $GPUCAT_WAREHOUSE, $GPUCAT_DB, else gpucat.duckdb in the user data directory).
    schedule_group: refresh the sources of this group (or these groups) of the schedules file
        (gpucat serve and prefect.yaml's deployments name their group), instead of `providers`.
    coalesce_groups: groups whose sources join this run when they are due (no run of them
        within their interval): gpucat serve sets it, so a tick cancelled while another
        group's run held the database is made up by the next run, not lost.
    schedules: the schedules file (default: $GPUCAT_SCHEDULES, else the one shipped with gpucat);
        `gpucat serve --config FILE` sets it.
    """
    settings = Settings.from_env()  # the flow run's edge: gpucat's settings are read here, once
    if schedules:
        settings = replace(settings, schedules=Path(schedules))
    where = db.db_path(db_path, settings)
    writer = db.writer(where, lake_data=settings.lake_data)
    label = database_label(where)
    try:
        if schedule_group is not None:
            providers = _group_sources(
                writer, [schedule_group] if isinstance(schedule_group, str) else schedule_group, coalesce_groups or [], settings.schedules
            )
        sources = select_sources(providers)
        print(f"refreshing {len(sources)} sources into {where}")
        with tempfile.TemporaryDirectory(prefix="gpucat-") as workdir:
            options = pipeline.FetchOptions(
                workdir=Path(workdir),
                replay_dir=Path(replay_dir) if replay_dir else None,
                record_dir=Path(record_dir) if record_dir else None,
                settings=settings,
                reference_cache=settings.cache_root() / "reference",  # as the in-process refresh: a new warehouse skips pandera on unchanged CSVs
            )
            flow_run_id = str(flow_run.id) if flow_run.id else None
            steps = TaskSteps(prepare_as_tasks=preparations_as_tasks())
            runs = pipeline.refresh_sources(writer, sources, options, steps=steps, flow_run_id=flow_run_id)
        summary = [pipeline.summary_row(run) for run in runs]
        for row in summary:  # into the run's logs, as redacted as the records
            if row["status"] in ("failed", "quarantined"):
                print(f"{row['source']} {row['status']}: {row['error']}")
        create_table_artifact(key=f"refresh-summary-{label}", table=summary, description=f"Sources refreshed by this run into {where}")
        with writer.open() as con:
            publish_price_artifacts(con, label, where)
    finally:
        writer.close()
    ok, message = pipeline.refresh_outcome(summary)
    message = f"{message} into {where}"
    print(message)
    return Completed(message=message, data=summary) if ok else Failed(message=message, data=summary)


def _group_sources(writer: db.Writer, names: list[str], coalesce: list[str], schedules: Path | None = None) -> list[str]:
    """The named groups' sources, then those of the `coalesce` groups that are due."""
    from gpucat.schedules import due_groups, load_groups, select_groups

    groups = load_groups(schedules)
    chosen = select_groups(groups, names)
    if coalesce:
        with writer.open() as con:
            due = due_groups(con, select_groups(groups, coalesce), datetime.now(UTC))
        chosen += [g for g in due if g not in chosen]
    return [source for group in chosen for source in group.sources]


def publish_price_artifacts(con: Any, label: str, where: Path | str) -> None:
    """The report's headline on the flow run: cheapest $/GPU-hour per GPU model, as a table and a bar chart;
    keys and descriptions name the database (`label`, `where`)."""
    from prefect.artifacts import create_markdown_artifact

    from gpucat import report

    rows = report.headline(report.price_spread(con))
    create_table_artifact(key=f"price-headline-{label}", table=rows, description=f"Cheapest on-demand and spot $/GPU-hour per GPU model in {where}")
    create_markdown_artifact(key=f"price-headline-chart-{label}", markdown=report.headline_markdown(rows),
                             description=f"Cheapest on-demand $/GPU-hour per GPU model in {where} (gpucat report draws the full charts)")
