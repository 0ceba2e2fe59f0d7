"""`gpucat refresh` progress on stderr, fed by pipeline progress events (gpucat/progress.py).

On a terminal: one live line per source, rewritten in place (waiting, fetching, parsing,
validating, loading, then "done: N rows, M rejected" or "failed: why"). Not on a terminal: one
plain line per change, so a log shows the same story. With --json: nothing.
"""

from __future__ import annotations

import threading
from typing import Any

from rich.console import Console
from rich.text import Text

from gpucat.cli._render import truncate

DONE = {"ok": "done"}
STYLE = {"done": "green", "failed": "red", "skipped": "yellow", "quarantined": "yellow", "unchanged": "cyan"}


def describe(stage: str, detail: str | None) -> str:
    """"done: 46 rows, 5 rejected", "failed: FetchError: …", "fetching"."""
    word = DONE.get(stage, stage)
    return f"{word}: {' '.join(detail.split())}" if detail else word


class RefreshProgress:
    """A listener for progress events; use as a context manager around the refresh."""

    def __init__(self, sources: list[str], *, quiet: bool, console: Console | None = None):
        self.console = console or Console(stderr=True, highlight=False)
        self.mode = "off" if quiet else ("live" if self.console.is_terminal else "lines")
        self.state: dict[str, str] = {s: "waiting" for s in sources}
        self.name_width = max((len(s) for s in sources), default=0)
        self.lock = threading.Lock()
        self.live: Any = None

    def __enter__(self) -> RefreshProgress:
        if self.mode == "live":
            from rich.live import Live

            self.live = Live(self._render(), console=self.console, refresh_per_second=8, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.__exit__(*exc)

    def update(self, source: str, stage: str, detail: str | None) -> None:
        line = describe(stage, detail)
        with self.lock:
            if self.state.get(source) == line:
                return
            self.state[source] = line
            if self.mode == "lines":
                self.console.print(f"{source}: {line}", soft_wrap=True)
            elif self.live is not None:
                self.live.update(self._render())

    def _render(self) -> Text:
        width = self.console.width
        text = Text()
        for i, (source, line) in enumerate(self.state.items()):
            word = line.split(":", 1)[0]
            text.append(source.ljust(self.name_width) + "  ", style="bold")
            text.append(truncate(line, max(10, width - self.name_width - 3)), style=STYLE.get(word, ""))
            if i < len(self.state) - 1:
                text.append("\n")
        return text
