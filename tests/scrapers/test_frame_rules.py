"""The frame's rules, read from each source module's syntax tree: a module holds its provider's
knowledge and leaves the frame's work to the frame (scrapers/base.py, _json.py, _paging.py).

- provenance: no record is built with `provider=`, `source=`, `source_url=`, `scraped_at=` or
  `verified_on=` (nor positionally up to them); `parse_page` stamps them.
- pagination: no `while` loop and no `for ... in range(...)` loop that fetches; `_paging.paginate` walks.
- record errors: no `except` for a record's shape (KeyError, AttributeError, IndexError, ...), and
  no TypeError/ValueError/LookupError handler around a `yield` or turning into a `ParseError`;
  `each_record` rejects a bad record and `parse_page` fails a bad page.
- JSON: no `json.load(s)` of the body; `_json.page` reads it and reports a shape error one way.

The checker is tested against planted bad modules so it can fail.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from gpucat.schemas.records import RECORD_TYPES, Skipped
from gpucat.scrapers import all_sources

PROVENANCE = {"provider", "source", "source_url", "scraped_at", "verified_on"}
RECORDS = {cls.__name__: cls for cls in [*RECORD_TYPES.values(), Skipped]}
SHAPE_ERRORS = {"KeyError", "AttributeError", "IndexError", "ZeroDivisionError", "ArithmeticError", "RecursionError", "Exception", "BaseException"}
FETCHING = {"get", "post_json"}


def source_modules() -> list[Path]:
    """The files of every registered source's parse and fetch functions."""
    names = {f.__module__ for s in all_sources().values() for f in (s.parse, s.fetch)}
    return sorted({Path(sys.modules[name].__file__ or "") for name in names})


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _caught(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {_name(t) for t in types}


def _holds(nodes: list[ast.stmt], kind: type | tuple[type, ...]) -> bool:
    return any(isinstance(n, kind) for stmt in nodes for n in ast.walk(stmt))


def _raises_parse_error(nodes: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Raise) and n.exc is not None and "ParseError" in ast.unparse(n.exc) for stmt in nodes for n in ast.walk(stmt))


def _fetches(nodes: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in FETCHING for stmt in nodes for n in ast.walk(stmt))


def violations(text: str) -> list[str]:
    """Each place `text` (a source module) does the frame's work, as 'line: rule: what'."""
    found: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name in RECORDS:
                order = [f.name for f in fields(RECORDS[name])]
                by_position = set(order[: len(node.args)])
                for field in sorted((by_position | {k.arg for k in node.keywords if k.arg}) & PROVENANCE):
                    found.append(f"{node.lineno}: provenance: {name}(...) is given {field}")
            elif name != "Source":
                for keyword in node.keywords:
                    if keyword.arg in {"source", "source_url", "scraped_at"}:
                        found.append(f"{node.lineno}: provenance: {name}(...) is given {keyword.arg}")
            if name in {"load", "loads"} and _name(getattr(node.func, "value", node.func)) == "json":
                if any(isinstance(n, ast.Name) and n.id == "body" for arg in node.args for n in ast.walk(arg)):
                    found.append(f"{node.lineno}: json: the body is decoded by hand (use _json.page)")
        elif isinstance(node, ast.While):
            found.append(f"{node.lineno}: pagination: a while loop (use _paging.paginate)")
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and _name(node.iter.func) == "range" and _fetches(node.body):
            found.append(f"{node.lineno}: pagination: a range loop that fetches (use _paging.paginate)")
        elif isinstance(node, ast.Try):
            for handler in node.handlers:
                caught = _caught(handler)
                if caught & SHAPE_ERRORS:
                    found.append(f"{handler.lineno}: record errors: catches {', '.join(sorted(caught & SHAPE_ERRORS))} (the frame rejects or fails)")
                elif caught & {"TypeError", "ValueError", "LookupError"} and _holds(node.body, (ast.Yield, ast.YieldFrom)):
                    found.append(f"{handler.lineno}: record errors: catches {', '.join(sorted(caught))} around a yield (use each_record)")
                elif caught & {"TypeError", "ValueError"} and _raises_parse_error(handler.body):
                    found.append(f"{handler.lineno}: record errors: turns {', '.join(sorted(caught))} into a ParseError (the frame does)")
    return found


@pytest.mark.parametrize("path", source_modules(), ids=lambda p: p.stem)
def test_a_source_module_leaves_the_frame_its_work(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8")) == []


# --- the checker can fail --------------------------------------------------------------------

PLANTED = {
    "provenance-keyword": ("yield Offer(offer_id='x', source=SOURCE.name, scraped_at=fetched_at)", ["provenance: Offer(...) is given scraped_at", "provenance: Offer(...) is given source"]),
    "provenance-positional": ("yield ExchangeRate('EUR', 1.0, day, 'ecb-rates', url, fetched_at)", ["provenance: ExchangeRate(...) is given scraped_at", "provenance: ExchangeRate(...) is given source", "provenance: ExchangeRate(...) is given source_url"]),
    "skipped-url": ("yield Skipped('not_gpu', 1, ('x',), url)", ["provenance: Skipped(...) is given source_url"]),
    "terms-day": ("yield ScrapedStorageTerm(kind='block', verified_on=fetched_at.date().isoformat())", ["provenance: ScrapedStorageTerm(...) is given verified_on"]),
    "provenance-elsewhere": ("yield _offer(row, source_url=url)", ["provenance: _offer(...) is given source_url"]),
    "while-paging": ("while url:\n    page = fetcher.get(url)\n    url = next_link(page)", ["pagination: a while loop (use _paging.paginate)"]),
    "range-paging": ("for _ in range(MAX_PAGES):\n    yield fetcher.get(URL, params=params)", ["pagination: a range loop that fetches (use _paging.paginate)"]),
    "record-except": ("for row in rows:\n    try:\n        yield _offer(row)\n    except (KeyError, TypeError) as exc:\n        raise ParseError(f'row lacks {exc}')", ["record errors: catches KeyError (the frame rejects or fails)"]),
    "value-error-around-yield": ("try:\n    yield from _offers(row)\nexcept ValueError:\n    pass", ["record errors: catches ValueError around a yield (use each_record)"]),
    "not-json": ("try:\n    payload = json.loads(body.read())\nexcept ValueError as exc:\n    raise ParseError(f'not JSON: {exc}')", ["json: the body is decoded by hand (use _json.page)", "record errors: turns ValueError into a ParseError (the frame does)"]),
}


@pytest.mark.parametrize(("snippet", "expected"), PLANTED.values(), ids=PLANTED.keys())
def test_the_checker_finds_a_planted_bad_module(snippet: str, expected: list[str]) -> None:
    module = "def parse(body, *, url, fetched_at):\n" + "\n".join("    " + line for line in snippet.splitlines()) + "\n"
    assert sorted(v.split(": ", 1)[1] for v in violations(module)) == sorted(expected)


def test_the_checker_passes_what_the_frame_allows() -> None:
    allowed = '''
def parse(body, *, url, fetched_at):
    yield from each_record("offers", _json.page(body, "X answer", "items"), _offer)
    for zone in ZONES:
        pass


def _offer(row):
    try:
        price = float(row["price"])
    except ValueError as exc:
        return [Rejected("offers", (f"unparseable_number: {exc}",), row)]
    try:
        model = resolve(row["gpu"], provider="x")
    except LookupError as exc:
        return [Rejected("offers", (str(exc),), row)]
    return [Offer(offer_id=row["id"], price=price, gpu_model=model)]
'''
    assert violations(allowed) == []


def test_every_source_module_is_read() -> None:
    assert {p.stem for p in source_modules()} >= {"tensordock", "azure_retail", "vultr_plans", "ecb_rates"}
