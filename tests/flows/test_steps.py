"""How the refresh flow splits a refresh into task runs (flows/refresh.py's `TaskSteps`).

On Prefect's thread pool a source's preparation is no task run of its own (its outcome is a log
line of its burst's load and a row of the summary artifact); on any other task runner, which
needs a task to send the work anywhere, it is.
"""

from __future__ import annotations

import pytest
from prefect import flow
from prefect.task_runners import PrefectTaskRunner, ThreadPoolTaskRunner

from gpucat.flows.refresh import burst_name, outcome_line, preparations_as_tasks


@pytest.mark.parametrize(("runner", "as_tasks"), [(ThreadPoolTaskRunner(), False), (ThreadPoolTaskRunner(max_workers=2), False),
                                                  (PrefectTaskRunner(), True)], ids=repr)  # fmt: skip
def test_preparations_are_tasks_on_every_runner_but_the_thread_pool(runner, as_tasks):
    @flow(task_runner=runner, persist_result=False)
    def probe() -> bool:
        return preparations_as_tasks()

    assert probe() is as_tasks


def test_outside_a_flow_run_preparations_are_no_tasks():
    assert preparations_as_tasks() is False


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["ecb-rates"], "load-ecb-rates"),
        (["aws-spot", "azure-retail", "vast-bundles"], "load-aws-spot,azure-retail,vast-bundles"),
        (["aws-spot", "azure-retail", "vast-bundles", "runpod-graphql", "modal"], "load-aws-spot,azure-retail,vast-bundles+2"),
    ],
)
def test_a_load_is_named_after_its_burst(names, expected):
    assert burst_name(names) == expected


ROW = {"source": "vast-bundles", "status": "ok", "rows_fetched": 120, "rows_valid": 118, "rows_rejected": 2, "rows_skipped": 0,
       "duration_s": 1.2, "error": None}  # fmt: skip


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (ROW, "vast-bundles ok, 118 rows valid, 2 rejected"),
        (ROW | {"status": "unchanged", "rows_valid": None, "rows_rejected": None}, "vast-bundles unchanged, 0 rows valid, 0 rejected"),
        (ROW | {"status": "failed", "rows_valid": 0, "rows_rejected": 0, "error": "HTTP 503 from console.vast.ai"},
         "vast-bundles failed, 0 rows valid, 0 rejected: HTTP 503 from console.vast.ai"),
    ],
    ids=["ok", "unchanged", "failed"],
)  # fmt: skip
def test_each_source_outcome_is_one_log_line(row, expected):
    assert outcome_line(row) == expected
