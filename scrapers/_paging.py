"""Following an API's pages: one helper, three declared strategies, one behaviour at the cap.

Modelled on dlt's REST-client paginators: a source declares how its API links pages (the next
page's URL in the body, a cursor sent back as a query parameter, or numbered pages) and
`paginate` does the walking. Every walk has a page cap, and reaching it, or being sent the same
page twice, is a `FetchError` that says so: pages were left unread, which is a fetch problem, not
a payload the parser could not read, and never a silent stop. A page that is not the JSON the
strategy reads ends the walk; the parser then reports that page. Underscore module: not a source.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpucat.schemas.errors import FetchError
from gpucat.schemas.records import Page
from gpucat.scrapers.base import Fetcher

Params = Mapping[str, Any] | None


@dataclass(frozen=True)
class NextUrl:
    """The next page's full URL at `path` in the body (it carries the query, so params go after page one)."""

    path: tuple[str, ...]

    def next(self, doc: Any, url: str, params: Params) -> tuple[str, Params] | None:
        link = _at(doc, self.path)
        return (link, None) if isinstance(link, str) and link else None


@dataclass(frozen=True)
class Cursor:
    """A token at `path` in the body, sent back as query parameter `param`; empty or absent on the last page."""

    path: tuple[str, ...]
    param: str

    def next(self, doc: Any, url: str, params: Params) -> tuple[str, Params] | None:
        token = _at(doc, self.path)
        return (url, {**(params or {}), self.param: token}) if isinstance(token, str) and token else None


@dataclass(frozen=True)
class PageNumber:
    """Pages numbered from `start` in query parameter `param`; the walk ends at a page listing fewer than
    `size` items at `items` (a list or an object keyed by item)."""

    param: str
    size: int
    items: tuple[str, ...]
    start: int = 1

    def first(self, params: Params) -> Params:
        return {**(params or {}), self.param: self.start}

    def next(self, doc: Any, url: str, params: Params) -> tuple[str, Params] | None:
        listed = _at(doc, self.items)
        if not isinstance(listed, list | dict) or len(listed) < self.size:
            return None
        return url, {**(params or {}), self.param: (params or {})[self.param] + 1}


Strategy = NextUrl | Cursor | PageNumber


def paginate(
    fetcher: Fetcher, url: str, strategy: Strategy, *, what: str, max_pages: int, params: Params = None, headers: Mapping[str, str] | None = None
) -> Iterator[Page]:
    """Every page from `url` on, as `strategy` links them; `what` names the list in errors."""
    if isinstance(strategy, PageNumber):
        params = strategy.first(params)
    asked: set[str] = set()
    for _ in range(max_pages):
        asked.add(_key(url, params))
        page = fetcher.get(url, params=params, headers=headers)
        yield page
        following = strategy.next(_document(page), url, params)
        if following is None:
            return
        url, params = following
        if _key(url, params) in asked:
            raise FetchError(f"{what}: the API linked back to a page already read ({url}); stopped paging")
    raise FetchError(f"{what}: still paging after {max_pages} pages; stopped with pages unread (raise its page cap if the list really grew)")


def _document(page: Page) -> Any:
    with page.open() as body:
        try:
            return json.load(body)
        except ValueError:
            return None  # the parser reports the page


def _at(doc: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _key(url: str, params: Params) -> str:
    return json.dumps([url, sorted((params or {}).items())], default=str)
