"""In-process progress events from pipeline steps, for whoever listens (the CLI's display).

Steps call `report(source, stage)`; nothing listens by default. Listeners must be cheap and
thread-safe: sources run concurrently.
"""

from __future__ import annotations

from collections.abc import Callable

Listener = Callable[[str, str, str | None], None]
_listeners: list[Listener] = []


def subscribe(listener: Listener) -> Callable[[], None]:
    _listeners.append(listener)
    return lambda: _listeners.remove(listener)


def report(source: str, stage: str, detail: str | None = None) -> None:
    for listener in list(_listeners):
        listener(source, stage, detail)
