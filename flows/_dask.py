"""prefect-dask's task runner, with futures that keep the state their worker returned.

A failed step's state comes back from its worker with the exception attached, but prefect-dask's
future keeps it only once the future is waited on; reading `.state` before that asks the Prefect
API, whose copy has no data, so the error a run records became "FailedRun: Task run encountered
an exception ..." instead of the step's own error. The flow waits on a source's last step and
then reads every step's state, so these futures take the worker's state whenever Dask has it.
Imported only when prefect-dask is installed.
"""

from __future__ import annotations

from typing import Any

from prefect.client.schemas.objects import State
from prefect_dask.task_runners import DaskTaskRunner as _DaskTaskRunner
from prefect_dask.task_runners import PrefectDaskFuture


class DaskFuture(PrefectDaskFuture[Any]):
    @property
    def state(self) -> State:
        if self._final_state is None and self._wrapped_future.done():
            self.wait()  # the worker's state, with its data (the result or the exception)
        if self._final_state is not None:
            return self._final_state
        return super().state


class DaskTaskRunner(_DaskTaskRunner):
    def submit(self, task: Any, parameters: dict[str, Any], wait_for: Any = None, dependencies: Any = None) -> DaskFuture:
        future = super().submit(task, parameters, wait_for, dependencies)
        return DaskFuture(wrapped_future=future.wrapped_future, task_run_id=future.task_run_id)
