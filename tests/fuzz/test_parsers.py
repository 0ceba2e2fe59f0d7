"""Fuzzing every registered source's parser with mutated real-format fixtures (hypothesis).

Each example takes the source's fixture bodies, mutates one of them (byte flips, truncation,
a JSON key deleted or renamed or its value swapped, a CSV or HTML cell edited) and runs the
chain a refresh runs before loading: parse every page, the batch pass, normalization and
validation. The parser may reject a mutated input with a `GpucatError`; it must never raise
anything else, never take longer than the deadline, and never emit a record whose fields are not
of their declared types (validation coerces, so a price parsed as the string "1.5" would pass it
unnoticed). An unmutated fixture must pass the whole chain with no error at all, every record
stamped by the frame with its source and its page's fetch time. Derandomized and bounded so CI
pays a fixed, small price.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
import types
import typing
from dataclasses import fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpucat.schemas.errors import GpucatError
from gpucat.schemas.records import RECORD_TYPES, ExchangeRate, Page, ParseItem, Rejected, Skipped
from gpucat.schemas.validate import validate
from gpucat.scrapers import all_sources
from gpucat.scrapers.base import parse_pages
from gpucat.scrapers.capture import ReplayTransport
from gpucat.scrapers.http import Fetcher, make_client
from gpucat.scrapers.normalize import normalize
from tests.conftest import FIXTURES
from tests.faults.faults import _json_parts, _kind

SOURCES = sorted(all_sources())
# Values a provider has been known to send where a number or a name was expected.
ODD_VALUES: list[Any] = [None, "", "0", 0, -1, 1e308, "NaN", "abc", "1,5", [], {}, True, "€3.20", "  ", "H100", 10**20]
ODD_CELLS = ["", "-", "N/A", "0", "-1", "1e309", "$", "abc", "12,34", "∞", "\u00a0", "H100 80GB", '"', "<b>x</b>"]

FUZZ = settings(
    max_examples=25,
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


@functools.cache
def pages_of(name: str) -> list[tuple[str, datetime, bytes]]:
    """The pages the source's own `fetch` yields over its fixtures (replayed), as a refresh parses
    them: a fixture the fetch only reads (a region index) is no page to parse."""
    source = all_sources()[name]
    with tempfile.TemporaryDirectory(prefix="gpucat-fuzz-pages-") as work:
        transport = ReplayTransport(FIXTURES, FIXTURES / source.provider / source.name)
        fetcher = Fetcher(source, make_client(source, transport), workdir=Path(work), env={}, require_api_key=False)  # as a replay runs
        return [(page.url, page.fetched_at, page.path.read_bytes()) for page in source.fetch(fetcher)]


# --- mutations ----------------------------------------------------------------------------------


def key_paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every (container path, key) of a JSON document."""
    out: list[tuple] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((*prefix, k))
            out.extend(key_paths(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.extend(key_paths(v, (*prefix, i)))
    return out


def at(doc: Any, path: tuple) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def mutate_json(body: bytes, data: st.DataObject, how: str) -> bytes:
    parts = _json_parts(body)
    if parts is None:
        return body
    prefix, doc, suffix = parts
    paths = [p for p in key_paths(doc) if isinstance(p[-1], str)]
    if not paths:
        return body
    path = paths[data.draw(st.integers(0, len(paths) - 1), label="key")]
    parent, key = at(doc, path[:-1]), path[-1]
    if how == "delete":
        del parent[key]
    elif how == "rename":
        parent[key + "_x"] = parent.pop(key)
    else:
        parent[key] = data.draw(st.sampled_from(ODD_VALUES), label="value")
    return prefix + json.dumps(doc).encode() + suffix


def mutate_cell(body: bytes, data: st.DataObject) -> bytes:
    """Replace one CSV cell, or the text of one HTML/XML element or attribute value."""
    value = data.draw(st.sampled_from(ODD_CELLS), label="cell").encode()
    if _kind(body) == "csv":
        spans = [m.span(2) for m in re.finditer(rb'(^|,)("[^"\n]*"|[^,\n]*)', body, re.M)]
    else:
        spans = [m.span(1) for m in re.finditer(rb">([^<>]+)<", body)] + [m.span(1) for m in re.finditer(rb"=[\"']([^\"'<>]*)[\"']", body)]
    if not spans:
        return body
    start, end = spans[data.draw(st.integers(0, len(spans) - 1), label="span")]
    return body[:start] + value + body[end:]


def mutate(body: bytes, data: st.DataObject) -> bytes:
    kind = _kind(body)
    choices = ["flip", "truncate"] + (["json-delete", "json-rename", "json-value"] if kind == "json" else ["cell"])
    how = data.draw(st.sampled_from(choices), label="mutation")
    if how == "flip":
        out = bytearray(body)
        for _ in range(data.draw(st.integers(1, 8), label="flips")):
            i = data.draw(st.integers(0, max(len(out) - 1, 0)), label="at")
            if out:
                out[i] ^= data.draw(st.integers(1, 255), label="xor")
        return bytes(out)
    if how == "truncate":
        return body[: data.draw(st.integers(0, len(body)), label="cut")]
    if how == "cell":
        return mutate_cell(body, data)
    return mutate_json(body, data, how.removeprefix("json-"))


# --- the property -------------------------------------------------------------------------------

_PY = {"str": (str,), "float": (int, float), "int": (int,), "datetime": (datetime,), "date": (date,)}


def field_types(cls: type) -> dict[str, tuple[tuple[type, ...], bool]]:
    """Each field's allowed Python types, and whether None is allowed, from the dataclass annotations."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in fields(cls):
        hint = hints[f.name]
        args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
        allowed = tuple(t for a in args if a is not type(None) for t in _PY[a.__name__])
        out[f.name] = (allowed, type(None) in args)
    return out


TYPES = {table: field_types(cls) for table, cls in RECORD_TYPES.items()}


def check_record(item: Any) -> None:
    assert isinstance(item, typing.get_args(ParseItem)), f"not a parse item: {item!r}"
    if isinstance(item, Rejected):
        assert item.reasons and all(isinstance(r, str) for r in item.reasons), item
        return
    if item.table not in TYPES:
        return  # an item that is not a row of a table (e.g. a counted, skipped row)
    for name, (allowed, nullable) in TYPES[item.table].items():
        value = getattr(item, name)
        if value is None:
            assert nullable, f"{item.table}.{name} is None: {item!r}"
        else:
            assert isinstance(value, allowed) and not isinstance(value, bool), f"{item.table}.{name} = {value!r} ({type(value).__name__})"


def run_chain(name: str, pages: list[tuple[str, datetime, bytes]]) -> list[ParseItem]:
    """The chain a refresh runs before loading; the parsed items (a `GpucatError` propagates)."""
    source = all_sources()[name]
    with tempfile.TemporaryDirectory(prefix="gpucat-fuzz-") as work:
        on_disk = []
        for i, (url, fetched_at, body) in enumerate(pages):
            path = Path(work) / f"{i}.body"
            path.write_bytes(body)
            on_disk.append(Page(url=url, fetched_at=fetched_at, path=path))
        items = parse_pages(source, on_disk)
        for item in items:
            check_record(item)
        rates = {"EUR": ExchangeRate("EUR", 1.08, date(2026, 11, 19), "ecb-rates", "https://www.ecb.europa.eu/", datetime(2026, 11, 19, tzinfo=UTC))}
        normalized = list(normalize(items, rates))
        for table in source.tables:
            validate(table, [i for i in normalized if not isinstance(i, Rejected) and i.table == table])
    return items


@pytest.mark.parametrize("name", SOURCES)
def test_fixtures_pass_the_property_unmutated(name: str) -> None:
    pages = pages_of(name)
    items = run_chain(name, pages)  # no GpucatError: a fixture its own parser rejects fails here
    records = [i for i in items if not isinstance(i, Rejected | Skipped)]
    assert records, f"{name}: its fixtures give no records"
    source, fetched = all_sources()[name], {fetched_at for _, fetched_at, _ in pages}
    for record in records:
        assert record.source == source.name and record.scraped_at in fetched, record
        assert getattr(record, "provider", source.provider) == source.provider, record


@pytest.mark.parametrize("name", SOURCES)
@FUZZ
@given(data=st.data())
def test_mutated_fixtures_never_crash_a_parser(name: str, data: st.DataObject) -> None:
    pages = list(pages_of(name))
    i = data.draw(st.integers(0, len(pages) - 1), label="page")
    url, fetched_at, body = pages[i]
    pages[i] = (url, fetched_at, mutate(body, data))
    try:
        run_chain(name, pages)
    except GpucatError:
        pass  # rejecting a mutated payload is the parser's right


def test_the_chain_does_not_swallow_a_rejected_fixture() -> None:
    """What makes the unmutated property able to fail: a page its parser rejects raises out of the chain."""
    url, fetched_at, _ = pages_of("ecb-rates")[0]
    with pytest.raises(GpucatError, match="not XML"):
        run_chain("ecb-rates", [(url, fetched_at, b"<gesmes:Envelope")])
