"""Running a source's parser (and normalization) over fixture files, as `gpucat parse` does."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import httpx

from gpucat import pipeline
from gpucat.schemas.records import ParseItem, Rejected, Skipped
from gpucat.scrapers import get_source
from gpucat.scrapers.base import Source, parse_page
from gpucat.scrapers.http import Fetcher, make_client
from tests.conftest import FIXTURES

FETCHED = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)


def parse_fixture(source: str, *files: str) -> list[ParseItem]:
    """Parse and normalize fixture files, converting other currencies with the fixtures' own rates."""
    from tests.drift_checks import fixture_rates

    pages = pipeline.pages_from_files([FIXTURES / f for f in files])
    return pipeline.parse_source(get_source(source), pages, fixture_rates(FIXTURES))


def parse_bytes(source: str, body: bytes, url: str = "https://example.invalid/x") -> list[dict | Rejected]:
    """Only the parser in its frame (no batch pass, no normalization), over an in-memory body; records as dicts."""
    return [plain(i) for i in parse_page(get_source(source), io.BytesIO(body), url=url, fetched_at=FETCHED)]


def normalize_bytes(source: str, body: bytes, url: str = "https://example.invalid/x", rates=None, fetched_at: datetime = FETCHED) -> list[dict | Rejected]:
    """The parser and normalization (no batch pass), over an in-memory body; records as dicts."""
    from gpucat.scrapers.normalize import NO_RATES, normalize

    return [plain(i) for i in normalize(parse_page(get_source(source), io.BytesIO(body), url=url, fetched_at=fetched_at), rates or NO_RATES)]


def plain(item: ParseItem) -> dict | Rejected | Skipped:
    """A record as a plain dict with its table (whole-record comparisons); a rejection or skip as it is."""
    return item if isinstance(item, Rejected | Skipped) else {"table": item.table, **item.as_row()}


def offers(items: list[ParseItem]) -> list[dict]:
    """Records as plain dicts (with their table), for whole-record comparisons."""
    return [plain(i) for i in items if not isinstance(i, Rejected | Skipped)]


def rejected(items: list[ParseItem]) -> list[Rejected]:
    return [i for i in items if isinstance(i, Rejected)]


def skipped(items: list[ParseItem]) -> dict[str, int]:
    """Rows set aside as out of scope, counted per reason."""
    counts: dict[str, int] = {}
    for item in items:
        if isinstance(item, Skipped):
            counts[item.reason] = counts.get(item.reason, 0) + item.count
    return counts


def by_id(items: list[ParseItem]) -> dict[str, dict]:
    return {o["offer_id"]: o for o in offers(items)}


def mock_fetcher(source: Source, handler: Callable[[httpx.Request], httpx.Response], workdir: Path, env: Mapping[str, str] | None = None) -> Fetcher:
    """A live-path `Fetcher` for `source` whose requests `handler` answers (the real client factory, no network)."""
    return Fetcher(source, make_client(source, httpx.MockTransport(handler)), workdir=workdir, env={} if env is None else env)


def fixture_path(relative: str) -> Path:
    return FIXTURES / relative


def rejection_reasons(source: str, body: bytes) -> list[tuple[str, ...]]:
    """The reasons of each item the parser in its frame gives for `body`; an item that is not a
    rejection shows as its type's name, so a test of a malformed record sees anything else it gave."""
    return [i.reasons if isinstance(i, Rejected) else (type(i).__name__,) for i in parse_bytes(source, body)]
