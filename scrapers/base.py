"""What every source module declares, and the record types parsers produce.

A source is data: its name, provider, the hosts it may contact, the tables it fills, how to
fetch (a function over a `Fetcher`) and how to parse (a pure function over a payload).
Parsers never see an `httpx.Response`; they get the body as a binary stream plus the page's
URL and fetch time, so `gpucat parse FILE` and a live run share one code path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scrapers.http import Fetcher

Record = dict[str, Any]
"""A normalized row bound for `record["table"]`."""


@dataclass(frozen=True)
class Rejected:
    """A row that cannot be trusted: it goes to `rejected_rows` with its reasons, never silently away."""

    table: str
    reasons: tuple[str, ...]
    row: dict[str, Any]


ParseItem = Record | Rejected


@dataclass(frozen=True)
class Page:
    """One response body as a parser sees it: where it came from and when."""

    url: str  # redacted: never carries a secret
    fetched_at: datetime  # UTC
    path: Path  # the body on disk (capture directory or temporary)

    def open(self) -> IO[bytes]:
        return self.path.open("rb")


class ParseFn(Protocol):
    def __call__(self, body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterable[ParseItem]: ...


@dataclass(frozen=True)
class Source:
    """A declared source. Register it by defining `SOURCE` in a module under `scrapers/`."""

    name: str
    provider: str
    description: str
    tables: tuple[str, ...]
    hosts: frozenset[str]
    fetch: Callable[[Fetcher], Iterator[Page]]
    parse: ParseFn
    # Optional pass over the whole batch for checks that need every page (e.g. a price median).
    postprocess: Callable[[list[ParseItem]], Iterable[ParseItem]] | None = None
    api_key_env: str | None = None
    api_key_required: bool = False
    max_response_bytes: int = 64 * 10**6
    # A human-readable page documenting the endpoint, for whoever maintains the module.
    docs_url: str | None = None


def parse_pages(source: Source, pages: Iterable[Page]) -> list[ParseItem]:
    """Run a source's parser over pages, then its batch pass."""
    items: list[ParseItem] = []
    for page in pages:
        with page.open() as body:
            items.extend(source.parse(body, url=page.url, fetched_at=page.fetched_at))
    if source.postprocess is not None:
        items = list(source.postprocess(items))
    return items
