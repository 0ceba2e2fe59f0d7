"""What every source module declares: the `Source` record the registry discovers.

A source is data: its name, provider, the hosts it may contact, the tables it fills, how to
fetch (a function over a `Fetcher`) and how to parse (a pure function over a payload).
Parsers never see an `httpx.Response`; they get the body as a binary stream plus the page's
URL and fetch time, so `gpucat parse FILE` and a live run share one code path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, Protocol

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Page, ParseItem, Rejected, type_problems
from gpucat.schemas.settings import Settings


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


def parse_pages(source: Source, pages: Iterable[Page]) -> list[ParseItem]:
    """Run a source's parser over pages, then its batch pass.

    A parser that trips over a payload of the wrong shape (a key missing, a string where an
    object was, a number that is not one) rejects the payload: the source fails with a
    `ParseError` naming the page, never with a traceback. A record whose fields are not of their
    declared types becomes a `Rejected` row, since validation would coerce it unnoticed.
    """
    items: list[ParseItem] = []
    for page in pages:
        with page.open() as body:
            try:
                items.extend(source.parse(body, url=page.url, fetched_at=page.fetched_at))
            except UnicodeDecodeError as exc:  # a binary or mis-encoded body is a payload problem
                raise ParseError(f"{source.name}: {page.url} is not UTF-8 text (byte {exc.start})") from None
            except _SHAPE_ERRORS as exc:
                raise ParseError(f"{source.name}: {page.url} is not in the expected shape ({type(exc).__name__}: {str(exc)[:200]})") from None
    if source.postprocess is not None:
        try:
            items = list(source.postprocess(items))
        except _SHAPE_ERRORS as exc:
            raise ParseError(f"{source.name}: batch is not in the expected shape ({type(exc).__name__}: {str(exc)[:200]})") from None
    return [_typed(item) for item in items]


# What a parser raises when the payload is not what it expects (its own bugs show up in its tests).
_SHAPE_ERRORS = (KeyError, IndexError, TypeError, AttributeError, ValueError, ArithmeticError, RecursionError)


def _typed(item: ParseItem) -> ParseItem:
    if isinstance(item, Rejected):
        return item
    problems = type_problems(item)
    return Rejected(item.table, tuple(f"wrong_type: {p}" for p in problems), item.as_row()) if problems else item
