"""Reading a provider's HTML pricing page by its visible structure: headings, header labels, cells.

Pricing pages change without notice. These helpers find things by what a reader sees (a heading's
text, a column's header label) rather than by position in the document, and every lookup that
comes back empty raises `ParseError` naming the element it expected, so a redesigned page fails
the source loudly instead of loading zero or misaligned rows. Underscore module: not a source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import IO

from bs4 import BeautifulSoup, Tag

from schemas.errors import ParseError

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_SPACE = re.compile(r"\s+")
_USD = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
_NUMBER = re.compile(r"^[0-9][0-9,]*(?:\.[0-9]+)?$")
# Cells that stand where a price would: a sales contact or a dash is never a price of 0.
_CONTACT = re.compile(r"\bcontact\b", re.IGNORECASE)
_DASHES = {"", "-", "–", "—", "n/a", "N/A"}


# The largest HTML page parsed. A parsed tree costs about a hundred times the page in memory and
# time grows with it (a 50 MB page took 6.6 GB and 219 s), while pricing pages are a few hundred
# KB; a page past this is refused before parsing, within the memory of reading it (bench/html_bound.py).
MAX_HTML_BYTES = 4 * 10**6


def page(body: IO[bytes], what: str) -> BeautifulSoup:
    """The document, parsed with lxml; `what` names the page in errors. Pages over MAX_HTML_BYTES are refused."""
    raw = body.read(MAX_HTML_BYTES + 1)
    if len(raw) > MAX_HTML_BYTES:
        raise ParseError(f"{what}: the page is over {MAX_HTML_BYTES:,} bytes, far past any pricing page; refusing to parse it")
    if not raw.strip():
        raise ParseError(f"{what}: empty body")
    doc = BeautifulSoup(raw, "lxml")
    if doc.body is None or not text(doc.body):
        raise ParseError(f"{what}: no HTML body")
    return doc


def text(node: Tag | None) -> str:
    """The node's visible text, whitespace collapsed."""
    if node is None:
        return ""
    return _SPACE.sub(" ", node.get_text(" ", strip=True)).strip()


def own_text(node: Tag) -> str:
    """The node's text without its <sup> footnote markers ("4<sup>1</sup>" -> "4")."""
    return _SPACE.sub(" ", " ".join(s for s in node.find_all(string=True) if s.parent.name != "sup")).strip()


def heading(root: Tag, label: str, what: str) -> Tag:
    """The first h1-h6 whose text is `label` (case-insensitive)."""
    wanted = label.casefold()
    for node in root.find_all(HEADINGS):
        if text(node).casefold() == wanted:
            return node
    found = [text(h) for h in root.find_all(HEADINGS)][:20]
    raise ParseError(f"{what}: no heading {label!r} (headings on the page: {found})")


def grid_by_headers(root: Tag, required: Sequence[str], what: str) -> tuple[list[str], list[list[Tag]]]:
    """A table drawn with <div>s: the header row holding every `required` label, and its data rows.

    The header row is the element whose child elements' texts include every label; data rows
    are the other elements of the same tag and class under `root` (a CMS repeats one row
    template). Each row must have one cell per header.
    """
    for node in root.find_all(True):
        cells = [c for c in node.children if isinstance(c, Tag)]
        labels = [text(c) for c in cells]
        if len(cells) < len(required) or not all(_has(labels, label) for label in required):
            continue
        rows = []
        for other in root.find_all(node.name):
            if other is node or other.get("class") != node.get("class"):
                continue
            row = [c for c in other.children if isinstance(c, Tag)]
            if len(row) != len(labels):
                raise ParseError(f"{what}: a row has {len(row)} cells under {len(labels)} headers {labels}: {text(other)!r}")
            rows.append(row)
        return labels, rows
    raise ParseError(f"{what}: no header row with labels {list(required)}")


def table_by_headers(root: Tag, required: Sequence[str], what: str) -> tuple[list[str], list[list[Tag]]]:
    """The first <table> under `root` whose header row holds every `required` label.

    Returns the header labels and the body rows as lists of cells (th and td), each row as
    long as the header; a shorter or longer row is a changed layout, not a row to guess at.
    """
    for table in root.find_all("table"):
        headers = _header_labels(table)
        if all(_has(headers, label) for label in required):
            rows = []
            for tr in _body_rows(table):
                cells = tr.find_all(["th", "td"], recursive=False)
                if len(cells) != len(headers):
                    raise ParseError(f"{what}: a row has {len(cells)} cells under {len(headers)} headers {headers}: {text(tr)!r}")
                rows.append(cells)
            return headers, rows
    seen = [_header_labels(t) for t in root.find_all("table")]
    raise ParseError(f"{what}: no <table> with headers {list(required)} (tables seen: {seen})")


def column(headers: Sequence[str], label: str, what: str) -> int:
    """Index of the header equal to `label` (case-insensitive, whitespace collapsed)."""
    for i, header in enumerate(headers):
        if _same(header, label):
            return i
    raise ParseError(f"{what}: no column {label!r} (columns: {list(headers)})")


def usd(cell: str) -> float | None:
    """The first US-dollar amount in a cell ("$2,048.50 / Hour" -> 2048.5), or None."""
    match = _USD.search(cell)
    return float(match.group(1).replace(",", "")) if match else None


def number(cell: str) -> float | None:
    """A plain number cell ("2,048" -> 2048.0); a dash or anything else is None."""
    cell = cell.strip()
    return float(cell.replace(",", "")) if _NUMBER.match(cell) else None


def not_a_price(cell: str) -> str | None:
    """Why a price cell holds no price ("Contact sales", blank, a dash), or None when it may hold one."""
    stripped = cell.strip()
    if _CONTACT.search(stripped):
        return f"no_price: {stripped!r} is a sales contact, not a price"
    if stripped in _DASHES:
        return f"no_price: blank price cell {stripped!r}"
    if usd(stripped) is None:
        return f"no_price: {stripped!r} holds no dollar amount"
    return None


def require(items: Iterable, what: str) -> list:
    """The items as a list; none at all means the page no longer has what the parser reads."""
    found = list(items)
    if not found:
        raise ParseError(f"{what}: nothing found")
    return found


def _header_labels(table: Tag) -> list[str]:
    head = table.find("thead")
    row = head.find("tr") if head is not None else table.find("tr")
    return [text(c) for c in row.find_all(["th", "td"], recursive=False)] if row is not None else []


def _body_rows(table: Tag) -> list[Tag]:
    bodies = table.find_all("tbody", recursive=False)
    if bodies:
        return [tr for body in bodies for tr in body.find_all("tr", recursive=False)]
    return table.find_all("tr")[1:]


def _same(a: str, b: str) -> bool:
    return _SPACE.sub(" ", a).strip().casefold() == _SPACE.sub(" ", b).strip().casefold()


def _has(headers: Sequence[str], label: str) -> bool:
    return any(_same(h, label) for h in headers)
