"""The `refresh` flow: per source, fetch -> parse -> validate -> load, sources concurrently.

Thin by design: every step is a function in `gpucat.pipeline`. HTTP retries happen per request
inside the fetch step (a failed page is retried, not the whole walk); no task retries a parse
or validation error. A failing source never stops the others; the flow ends Failed, naming
the sources that failed, while the others' data is loaded.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import replace
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run
from prefect.states import Completed, Failed, State

from gpucat import pipeline
from gpucat.schemas.settings import Settings
from gpucat.scrapers import get_source, select_sources
from gpucat.warehouse import db
from gpucat.warehouse import runs as runs_log
from gpucat.warehouse.load import RunRecord


@task(name="fetch", cache_policy=NO_CACHE)
def fetch_task(source_name: str, options: pipeline.FetchOptions) -> list:
    return pipeline.fetch_source(get_source(source_name), options)


@task(name="parse", cache_policy=NO_CACHE)
def parse_task(source_name: str, pages: list, rates: dict) -> list:
    return pipeline.parse_source(get_source(source_name), pages, rates)


@task(name="validate", cache_policy=NO_CACHE)
def validate_task(source_name: str, items: list, pages: list) -> pipeline.SourceBatch:
    return pipeline.validate_source(get_source(source_name), items, len(pages))


# Only these tasks open the warehouse, each for one short transaction (`db.Writer`): readers
# are locked out while a source loads, never while it fetches.
@task(name="load", cache_policy=NO_CACHE)
def load_task(writer: db.Writer, run: RunRecord, batch: pipeline.SourceBatch) -> RunRecord:
    with writer.open() as con:
        return pipeline.load_batches(con, run, batch)


@task(name="record-failure", cache_policy=NO_CACHE)
def record_failure_task(writer: db.Writer, run: RunRecord, error: BaseException) -> RunRecord:
    return pipeline.record_outcome_in(writer, run, error)


@task(name="load-reference", cache_policy=NO_CACHE)
def load_reference_task(writer: db.Writer, schedules: Path | None = None) -> dict[str, int]:
    with writer.open() as con:
        return pipeline.load_reference(con, schedules)


@task(name="exchange-rates", cache_policy=NO_CACHE)
def exchange_rates_task(writer: db.Writer) -> dict:
    with writer.open() as con:
        return pipeline.exchange_rates(con)


def database_label(db_path: Path | str) -> str:
    """A database's identity in deployment names, tags and artifact keys: its file name and a
    hash of its absolute path (or of a DuckLake URL as typed), in lower-case letters, digits
    and dashes, so two databases with one file name still differ."""
    where = db_path if isinstance(db_path, str) else str(Path(db_path).resolve())
    stem = Path(db_path).stem if isinstance(db_path, Path) else "lake"
    return f"{re.sub(r'[^a-z0-9]+', '-', stem.lower()).strip('-')[:32] or 'db'}-{hashlib.sha256(where.encode()).hexdigest()[:8]}"


@flow(name="refresh", log_prints=True)
def refresh(
    providers: list[str] | None = None,
    replay_dir: str | None = None,
    record_dir: str | None = None,
    db_path: str | None = None,
    rates_first: bool = False,
    schedule_group: str | list[str] | None = None,
    coalesce_groups: list[str] | None = None,
    schedules: str | None = None,
) -> State:
    """Refresh the catalog from every selected source into the DuckDB file.

    providers: providers or source names to refresh (default: every registered source).
    replay_dir: a capture directory to replay instead of the network (e.g. the repo's fixtures).
    record_dir: a directory to keep every fetched response in, as a capture.
    db_path: the DuckDB file (default: $GPUCAT_WAREHOUSE, $GPUCAT_DB, else gpucat.duckdb in the user data directory).
    rates_first: when the warehouse has no exchange rates yet, refresh the rates sources too
        (scheduled groups set it, so a group's first run can convert non-USD prices).
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
    writer = db.Writer(db.db_path(db_path, settings))
    where = writer.path if writer.path is not None else db_path
    label = database_label(where)
    try:
        if schedule_group is not None:
            providers = _group_sources(
                writer, [schedule_group] if isinstance(schedule_group, str) else schedule_group, coalesce_groups or [], settings.schedules
            )
        sources = select_sources(providers)
        print(f"refreshing {len(sources)} sources into {where}")
        load_reference_task(writer, settings.schedules)
        if rates_first:
            sources = pipeline.with_prerequisites(sources, exchange_rates_task(writer))
        with tempfile.TemporaryDirectory(prefix="gpucat-") as workdir:
            options = pipeline.FetchOptions(
                workdir=Path(workdir),
                replay_dir=Path(replay_dir) if replay_dir else None,
                record_dir=Path(record_dir) if record_dir else None,
                settings=settings,
            )
            flow_run_id = str(flow_run.id) if flow_run.id else None
            started = {source.name: pipeline.new_run(source, flow_run_id, options.replay_dir) for source in sources}
            record_start(writer, started.values())
            runs = []
            # Sources that feed normalization (exchange rates) load first; the rest then
            # convert their prices with the rates loaded so far, this run's included.
            for phase in pipeline.phases(sources):
                rates = exchange_rates_task(writer)
                chains = []
                # A fallback runs only when its primary, earlier in this run or before it, was skipped or failed.
                needless = pipeline.needless_fallbacks(writer, phase, {run.source: run for run in runs})
                for source in phase:
                    run = started[source.name]
                    if source.name in needless:
                        runs.append(record_failure_task(writer, run, needless[source.name]))
                        continue
                    pages = fetch_task.submit(source.name, options)
                    items = parse_task.submit(source.name, pages, rates)
                    batch = validate_task.submit(source.name, items, pages)
                    loaded = load_task.submit(writer, run, batch)
                    chains.append((run, [pages, items, batch, loaded]))
                runs.extend(_settle(writer, run, futures) for run, futures in chains)
        summary = [pipeline.summary_row(run) for run in runs]
        create_table_artifact(key=f"refresh-summary-{label}", table=summary, description=f"Sources refreshed by this run into {where}")
        with writer.open() as con:
            publish_price_artifacts(con, label, where)
    finally:
        writer.close()
    ok, message = pipeline.refresh_outcome(summary)
    message = f"{message} into {where}"
    print(message)
    return Completed(message=message, data=summary) if ok else Failed(message=message, data=summary)


def record_start(writer: db.Writer, started: Iterable[RunRecord]) -> None:
    """Each source's run as `running` under this flow's process (as `pipeline.refresh_sources` does), after
    marking `interrupted` the runs of refreshes that died. In the flow's own process, not a task: the runner
    recorded is the process whose death leaves the rows, and its host is the one whose processes are checked."""
    with writer.open() as con, db.transaction(con):
        runs_log.interrupt_dead_runs(con, datetime.now(UTC))
        runs_log.start_runs(con, started)


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

    rows = report.headline(report.collect(con).spread)
    create_table_artifact(key=f"price-headline-{label}", table=rows, description=f"Cheapest on-demand and spot $/GPU-hour per GPU model in {where}")
    create_markdown_artifact(key=f"price-headline-chart-{label}", markdown=report.headline_markdown(rows),
                             description=f"Cheapest on-demand $/GPU-hour per GPU model in {where} (gpucat report draws the full charts)")


def _settle(writer: db.Writer, run: RunRecord, futures: list) -> RunRecord:
    futures[-1].wait()
    failed = next((f for f in futures if f.state.is_failed()), None)
    if failed is None:
        return futures[-1].result()
    return record_failure_task(writer, run, failed.state.result(raise_on_failure=False))
