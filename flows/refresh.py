"""The `refresh` flow: per source, fetch -> parse -> validate -> load, sources concurrently.

Thin by design: every step is a function in `gpucat.pipeline`. HTTP retries happen per request
inside the fetch step (a failed page is retried, not the whole walk); no task retries a parse
or validation error. A failing source never stops the others; the flow ends Failed, naming
the sources that failed, while the others' data is loaded.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run
from prefect.states import Completed, Failed, State

from gpucat import pipeline
from scrapers import get_source, select_sources
from warehouse import db
from warehouse.load import RunRecord


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
def load_reference_task(writer: db.Writer) -> dict[str, int]:
    with writer.open() as con:
        return pipeline.load_reference(con)


@task(name="exchange-rates", cache_policy=NO_CACHE)
def exchange_rates_task(writer: db.Writer) -> dict:
    with writer.open() as con:
        return pipeline.exchange_rates(con)


@flow(name="refresh", log_prints=True)
def refresh(
    providers: list[str] | None = None,
    replay_dir: str | None = None,
    record_dir: str | None = None,
    db_path: str | None = None,
    rates_first: bool = False,
    schedule_group: str | None = None,
) -> State:
    """Refresh the catalog from every selected source into the DuckDB file.

    providers: providers or source names to refresh (default: every registered source).
    replay_dir: a capture directory to replay instead of the network (e.g. the repo's fixtures).
    record_dir: a directory to keep every fetched response in, as a capture.
    db_path: the DuckDB file (default: $GPUCAT_DB, else gpucat.duckdb in the run's working directory).
    rates_first: when the warehouse has no exchange rates yet, refresh the rates sources too
        (scheduled groups set it, so a group's first run can convert non-USD prices).
    schedule_group: refresh the sources of this group of the schedules file (gpucat serve and
        prefect.yaml's deployments name their group), instead of `providers`.
    """
    if schedule_group is not None:
        from gpucat.schedules import load_groups, select_groups

        [group] = select_groups(load_groups(), [schedule_group])
        providers = list(group.sources)
    sources = select_sources(providers)
    writer = db.Writer(db_path)
    try:
        load_reference_task(writer)
        if rates_first:
            sources = pipeline.with_prerequisites(sources, exchange_rates_task(writer))
        with tempfile.TemporaryDirectory(prefix="gpucat-") as workdir:
            options = pipeline.FetchOptions(
                workdir=Path(workdir),
                replay_dir=Path(replay_dir) if replay_dir else None,
                record_dir=Path(record_dir) if record_dir else None,
            )
            runs = []
            # Sources that feed normalization (exchange rates) load first; the rest then
            # convert their prices with the rates loaded so far, this run's included.
            for phase in pipeline.phases(sources):
                rates = exchange_rates_task(writer)
                chains = []
                for source in phase:
                    run = pipeline.new_run(source, str(flow_run.id) if flow_run.id else None, options.replay_dir)
                    pages = fetch_task.submit(source.name, options)
                    items = parse_task.submit(source.name, pages, rates)
                    batch = validate_task.submit(source.name, items, pages)
                    loaded = load_task.submit(writer, run, batch)
                    chains.append((run, [pages, items, batch, loaded]))
                runs.extend(_settle(writer, run, futures) for run, futures in chains)
        summary = [pipeline.summary_row(run) for run in runs]
        create_table_artifact(key="refresh-summary", table=summary, description="Sources refreshed by this run")
        with writer.open() as con:
            publish_price_artifacts(con)
    finally:
        writer.close()
    ok, message = pipeline.refresh_outcome(summary)
    return Completed(message=message, data=summary) if ok else Failed(message=message, data=summary)


def publish_price_artifacts(con: Any) -> None:
    """The report's headline on the flow run: cheapest $/GPU-hour per GPU model, as a table and a bar chart."""
    from prefect.artifacts import create_markdown_artifact

    from gpucat import report

    rows = report.headline(report.collect(con).spread)
    create_table_artifact(key="price-headline", table=rows, description="Cheapest on-demand and spot $/GPU-hour per GPU model")
    create_markdown_artifact(key="price-headline-chart", markdown=report.headline_markdown(rows),
                             description="Cheapest on-demand $/GPU-hour per GPU model (gpucat report draws the full charts)")


def _settle(writer: db.Writer, run: RunRecord, futures: list) -> RunRecord:
    futures[-1].wait()
    failed = next((f for f in futures if f.state.is_failed()), None)
    if failed is None:
        return futures[-1].result()
    return record_failure_task(writer, run, failed.state.result(raise_on_failure=False))
