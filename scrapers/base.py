"""What every source module declares: the `Source` record the registry discovers.

A source is data: its name, provider, the hosts it may contact, the tables it fills, how to
fetch (a function over a `Fetcher`) and how to parse (a pure function over a payload).
Parsers never see an `httpx.Response`; they get the body as a binary stream plus the page's
URL and fetch time, so `gpucat parse FILE` and a live run share one code path.

The frame around a parser lives here too, so a source module holds only its provider's
knowledge: `parse_page` stamps every record's provenance (provider, source, page URL, fetch
time, the day it verifies) and turns a payload of the wrong shape into a `ParseError`, and
`each_record` turns one bad record into a counted `Rejected` row with its reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, Protocol, TypeVar

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Page, ParseItem, Rejected, Skipped, type_problems
from gpucat.schemas.settings import Settings
from gpucat.scrapers import _linescan

T = TypeVar("T")


class Fetcher(Protocol):
    """What a source's `fetch` gets (implemented by `scrapers.http.Fetcher`): pages on disk, with retries."""

    api_key: str | None
    settings: Settings  # gpucat's settings, as the edge read them (GPUCAT_AWS_REGIONS, ...)

    def get(self, url: str, *, params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None) -> Page: ...

    def post_json(self, url: str, payload: Any, *, headers: Mapping[str, str] | None = None) -> Page: ...

    def version(self, value: str) -> None: ...


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
    # Every canonical gpu_model the module's reviewed mapping tables can produce; the drift
    # test checks each against the reference table, so a new mapping is never unchecked.
    gpu_targets: frozenset[str] = frozenset()
    # A source whose rows other sources' normalization reads (exchange rates): a refresh loads
    # every such source before it parses the others, so they use the rates this run fetched.
    loads_first: bool = False
    # The source this one stands in for (same provider, same offers, another endpoint): it runs
    # only when that primary's last run was skipped or failed, after the primary in the same
    # refresh, and each one's load retires the other's current offers, so a provider's offers
    # have one truth at a time (gpucat.pipeline.fallback_outcome, warehouse.load).
    fallback_for: str | None = None


def read_at_most(body: IO[bytes], cap: int, what: str) -> bytes:
    """The whole body when it holds at most `cap` bytes, having read at most `cap` + 1: a bigger one
    is refused with a `ParseError` naming `what`, before memory grows with it."""
    content = body.read(cap + 1)
    if len(content) > cap:
        raise ParseError(f"{what} is larger than {cap:,} bytes")
    return content


def parse_pages(source: Source, pages: Iterable[Page], *, processes: int | None = None) -> list[ParseItem]:
    """Run a source's parser over pages (`parse_page`), then its batch pass. `processes`: how many
    may scan one large file (the caller's GPUCAT_PARSE_PROCESSES; None: one per CPU that pays)."""
    items = list(_raw_items(source, pages, processes))
    if source.postprocess is not None:
        try:
            items = list(source.postprocess(items))
        except _SHAPE_ERRORS as exc:
            raise ParseError(f"{source.name}: batch is not in the expected shape ({type(exc).__name__}: {str(exc)[:200]})") from None
    return [_typed(item) for item in items]


def stream_pages(source: Source, pages: Iterable[Page], *, processes: int | None = None) -> Iterator[ParseItem]:
    """`parse_pages`' items one at a time, as the parser yields them, so a consumer that keeps
    them compactly never holds a marketplace's records at once. A source with a batch pass needs
    every item first, and gets `parse_pages` whole. `processes` as in `parse_pages`."""
    if source.postprocess is not None:
        yield from parse_pages(source, pages, processes=processes)
        return
    for item in _raw_items(source, pages, processes):
        yield _typed(item)


def _raw_items(source: Source, pages: Iterable[Page], processes: int | None) -> Iterator[ParseItem]:
    """Every page's items as the parser yields them, before the batch pass and typing."""
    with _linescan.processes(processes):
        for page in pages:
            with page.open() as body:
                yield from _page_items(source, body, url=page.url, fetched_at=page.fetched_at)


def parse_page(source: Source, body: IO[bytes], *, url: str, fetched_at: datetime) -> list[ParseItem]:
    """One body through a source's parser, each record stamped with where and when it was read.

    A parser that trips over a payload of the wrong shape (a key missing, a string where an
    object was, a number that is not one) rejects the payload: the source fails with a
    `ParseError` naming the page, never with a traceback. (One record of the wrong shape among
    good ones is `each_record`'s to reject.)
    """
    return list(_page_items(source, body, url=url, fetched_at=fetched_at))


def _page_items(source: Source, body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    items: Iterator[ParseItem] | None = None
    while True:
        try:  # a parser may be a generator (fails as it is read) or return a list (fails when called)
            if items is None:
                items = iter(source.parse(body, url=url, fetched_at=fetched_at))
            item = next(items)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:  # a binary or mis-encoded body is a payload problem
            raise ParseError(f"{source.name}: {url} is not UTF-8 text (byte {exc.start})") from None
        except _SHAPE_ERRORS as exc:
            raise ParseError(f"{source.name}: {url} is not in the expected shape ({type(exc).__name__}: {str(exc)[:200]})") from None
        yield _stamped(item, source, url, fetched_at)


def each_record(table: str, rows: Iterable[Any], build: Callable[[Any], Iterable[T]]) -> Iterator[T | Rejected]:
    """`build(row)`'s items for each raw row; a row it cannot read (a field missing or of the
    wrong kind) becomes one `Rejected` row with the reason, and the other rows still count."""
    for row in rows:
        try:
            items = list(build(row))
        except _SHAPE_ERRORS as exc:
            yield Rejected(table, (f"malformed_record: {_why(exc)}",), row if isinstance(row, dict) else {"record": str(row)[:500]})
        else:
            yield from items


def shape_error(what: str, problem: str) -> ParseError:
    """The one way a page of the wrong shape is reported: what the page is, then what is wrong."""
    return ParseError(f"{what}: {problem}")


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _stamped(item: ParseItem, source: Source, url: str, fetched_at: datetime) -> ParseItem:
    if isinstance(item, Rejected):
        return item
    if isinstance(item, Skipped):
        return dataclasses.replace(item, source_url=url)
    stamp: dict[str, Any] = {"source": source.name, "source_url": item.source_url or url, "scraped_at": fetched_at}
    if hasattr(item, "provider"):
        stamp["provider"] = source.provider
    if hasattr(item, "verified_on"):
        stamp["verified_on"] = fetched_at.date().isoformat()
    return dataclasses.replace(item, **stamp)


# What a parser raises when the payload is not what it expects (its own bugs show up in its tests).
_SHAPE_ERRORS = (KeyError, IndexError, TypeError, AttributeError, ValueError, ArithmeticError, RecursionError)


def _typed(item: ParseItem) -> ParseItem:
    if isinstance(item, Rejected | Skipped):
        return item
    problems = [f"wrong_type: {p}" for p in type_problems(item)] + [
        f"out_of_range: {name}: {value} does not fit a 64-bit integer"  # a column of them could not be built
        for name, value in item.as_row().items()
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63
    ]
    return Rejected(item.table, tuple(problems), item.as_row()) if problems else item
