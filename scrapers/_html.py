"""Reading a provider's HTML pricing page by its visible structure: headings, header labels, cells.

Pricing pages change without notice, and the markup a browser shows is rarely tidy: the label
that names a table sits outside the heading's parent, one section holds several tables, header
rows span two lines with colspans, body rows hide inside CMS wrappers, a grid row carries extra
cells for the mobile layout, and counts carry footnote markers. These helpers find things by what
a reader sees (a heading's text, a column's header label) within the part of the page a heading
opens, never by a path from the document root. Labels compare case- and whitespace-insensitively
and without footnote marks. Every lookup that comes back empty raises `ParseError` through
`base.shape_error`, as `_json` does, naming the element it expected, so a redesigned page fails
the source loudly instead of loading zero or misaligned rows. Underscore module: not a source.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TypeVar

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from gpucat.schemas.errors import ParseError
from gpucat.scrapers.base import shape_error

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
T = TypeVar("T")
_SPACE = re.compile(r"\s+")
# "$2.49", "US$2.49", "USD 2.49", "$2,048.50": a comma only ever groups thousands, so "$2,49" (a
# decimal comma) is no amount rather than 249 dollars.
_USD = re.compile(r"(?:\$|\bUSD\s*)\s*((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?)(?![0-9,])")
_NUMBER = re.compile(r"^[0-9][0-9,]*(?:\.[0-9]+)?$")
# Footnote marks after a label or a number: "PRICE/GPU/HR*", "Price(Per Hour)²", "4^1" (CoreWeave's
# server-rendered count; its page script turns the caret into a <sup> in the browser), "Free^*^".
_FOOTNOTE = re.compile(r"(?:\^[^\s^]+\^?|[*†‡¹²³⁴⁵⁶⁷⁸⁹⁰]+)$")
# Cells that stand where a price would: a sales contact or a dash is never a price of 0.
_PUNCTUATION = re.compile(r"[,;:()\[\]/\-–—_.]+")
_CONTACT = re.compile(r"\bcontact\b", re.IGNORECASE)
_BLANKS = {"", "n/a", "na", "tbd"}
_DASH_CHARS = "-–—"


# The largest HTML page parsed. A parsed tree costs about a hundred times the page in memory and
# time grows with it (a 50 MB page took 6.6 GB and 219 s), while pricing pages are a few hundred
# KB; a page past this is refused before parsing, within the memory of reading it (bench/html_bound.py).
MAX_HTML_BYTES = 4 * 10**6


def page(body: IO[bytes], what: str) -> BeautifulSoup:
    """The document, parsed with lxml; `what` names the page in errors. Pages over MAX_HTML_BYTES are refused."""
    raw = body.read(MAX_HTML_BYTES + 1)
    if len(raw) > MAX_HTML_BYTES:
        raise shape_error(what, f"the page is over {MAX_HTML_BYTES:,} bytes, far past any pricing page; refusing to parse it")
    if not raw.strip():
        raise shape_error(what, "empty body")
    doc = BeautifulSoup(raw, "lxml")
    if doc.body is None or not text(doc.body):
        raise shape_error(what, "no HTML body")
    return doc


def text(node: Tag | None) -> str:
    """The node's visible text, whitespace (non-breaking spaces included) collapsed."""
    if node is None:
        return ""
    return _SPACE.sub(" ", node.get_text(" ", strip=True)).strip()


def own_text(node: Tag) -> str:
    """The node's text without footnote markers: "4<sup>1</sup>", "4^1" and "4¹" all read "4"."""
    plain = _SPACE.sub(" ", " ".join(s for s in node.find_all(string=True) if s.parent.name != "sup")).strip()
    return _FOOTNOTE.sub("", plain).strip()


def label(value: str) -> str:
    """A label as compared: case-folded, whitespace collapsed, trailing footnote marks dropped, and
    punctuation read as a space ("RAM, GB" = "RAM (GB)", "On-demand, GPU-hour" = "On-demand GPU hour")."""
    plain = _FOOTNOTE.sub("", _SPACE.sub(" ", value).strip()).strip()
    return _SPACE.sub(" ", _PUNCTUATION.sub(" ", plain)).strip().casefold()


def same(a: str, b: str) -> bool:
    return label(a) == label(b)


def heading(root: Tag, wanted: str, what: str) -> Tag:
    """The first h1-h6 whose text is `wanted` (case- and whitespace-insensitive)."""
    for node in root.find_all(HEADINGS):
        if same(text(node), wanted):
            return node
    found = [text(h) for h in root.find_all(HEADINGS)][:20]
    raise shape_error(what, f"no heading {wanted!r} (headings on the page: {found})")


def read_section(root: Tag, wanted: str, what: str, read: Callable[[list[Tag]], T]) -> T:
    """`read` over the section of the first heading titled `wanted` that it can read.

    A page may repeat a heading's text (a menu, a mobile copy): each heading with the text is
    tried in document order, and the first section `read` finds its table in wins. When none
    does, the first section's error is raised, naming what it missed.
    """
    errors = []
    for node in root.find_all(HEADINGS):
        if same(text(node), wanted):
            try:
                return read(section(node))
            except ParseError as exc:
                errors.append(exc)
    if errors:
        raise errors[0]
    return read(section(heading(root, wanted, what)))


def section(head: Tag) -> list[Tag]:
    """Every element after `head` in document order, up to the next heading of the same or a higher
    rank: the part of the page the heading opens, wherever the markup nests it."""
    rank = int(head.name[1])
    nodes = []
    for node in head.next_elements:
        if not isinstance(node, Tag):
            continue
        if node.name in HEADINGS and int(node.name[1]) <= rank:
            break
        nodes.append(node)
    return nodes


def section_text(nodes: Sequence[Tag]) -> str:
    """The visible text of a section (each string once), whitespace collapsed."""
    strings = [str(s) for node in nodes if node.name not in ("script", "style") for s in node.children if isinstance(s, NavigableString) and not isinstance(s, Comment)]
    return _SPACE.sub(" ", " ".join(strings)).strip()


def children(node: Tag) -> list[Tag]:
    return [c for c in node.children if isinstance(c, Tag)]


class Grid:
    """One table drawn with <div>s: its header labels and its body rows, each cut to one cell per header."""

    def __init__(self, header_row: Tag, headers: list[str], rows: list[list[Tag]]):
        self.header_row, self.headers, self.rows = header_row, headers, rows


def grids_by_headers(nodes: Sequence[Tag], required: Sequence[str], what: str) -> list[Grid]:
    """Every <div> table among `nodes` whose header row holds every `required` label.

    A header row is an element whose child elements' texts include each label. Its body rows are
    the other elements of the same tag and class (a CMS repeats one row template) inside the
    smallest ancestor that holds the header row and such rows, so two tables in one section stay
    apart. Rows may carry more cells than there are headers (the cells a mobile layout shows
    instead): then only the cells of the header cells' kind count, the class tokens every header
    cell shares. A row that still does not line up with the headers is a changed layout.
    """
    header_rows = [n for n in nodes if _holds_labels([text(c) for c in children(n)], required)]
    # A wrapper whose only child is a header row matches too: keep the innermost.
    header_rows = [h for h in header_rows if not any(other is not h and _inside(other, h) for other in header_rows)]
    if not header_rows:
        raise shape_error(what, f"no header row with labels {list(required)}")
    grids = []
    for header_row in header_rows:
        header_cells = children(header_row)
        headers = [text(c) for c in header_cells]
        kind = set.intersection(*(set(c.get("class") or ()) for c in header_cells))
        rows = []
        for row in _template_rows(header_row, header_rows):
            cells = children(row)
            if len(cells) != len(headers) and kind:
                cells = [c for c in cells if kind <= set(c.get("class") or ())]
            if len(cells) != len(headers):
                raise shape_error(what, f"a row has {len(cells)} cells under {len(headers)} headers {headers}: {text(row)[:120]!r}")
            rows.append(cells)
        grids.append(Grid(header_row, headers, rows))
    # A row of the same template that no header row claims is a table whose header changed: fail
    # rather than drop that table quietly.
    claimed = {id(r) for g in grids for r in [g.header_row, *_template_rows(g.header_row, header_rows)]}
    template = {(g.header_row.name, tuple(g.header_row.get("class") or ())) for g in grids}
    orphans = [n for n in nodes if (n.name, tuple(n.get("class") or ())) in template and id(n) not in claimed]
    if orphans:
        raise shape_error(what, f"{len(orphans)} rows under no header row with labels {list(required)}, e.g. {text(orphans[0])[:80]!r}")
    return grids


def table_by_headers(nodes: Tag | Sequence[Tag], required: Sequence[str], what: str) -> tuple[list[str], list[list[Tag]]]:
    """The first <table> among `nodes` (or under a root) whose header holds every `required` label.

    The header is every row of <thead> (or the leading rows of <th> cells), spans expanded, so a
    two-row header with colspans gives one label per column: the labels stacked over it, joined
    with " / " ("ON-Demand / Pay as you go"); a required label may match either part. Body rows
    are every other <tr>, however deeply CMS wrappers nest them, with colspans expanded so each
    row has one cell per column; a row that does not is a changed layout, not a row to guess at.
    """
    tables = nodes.find_all("table") if isinstance(nodes, Tag) else [n for n in nodes if n.name == "table"]
    seen = []
    for table in tables:
        headers, head_rows = _header(table)
        seen.append(headers)
        if not all(_has(headers, wanted) for wanted in required):
            continue
        rows = []
        for tr in table.find_all("tr"):
            if any(tr is h for h in head_rows) or tr.find_parent("table") is not table:
                continue
            cells = [c for cell in tr.find_all(["th", "td"], recursive=False) for c in [cell] * _span(cell, "colspan")]
            if len(cells) != len(headers):
                raise shape_error(what, f"a row has {len(cells)} cells under {len(headers)} headers {headers}: {text(tr)!r}")
            rows.append(cells)
        return headers, rows
    raise shape_error(what, f"no <table> with headers {list(required)} (tables seen: {seen})")


def column(headers: Sequence[str], wanted: str, what: str) -> int:
    """Index of the header `wanted` names (case-insensitive, whitespace collapsed, footnote marks
    dropped; a stacked "A / B" header matches A or B)."""
    for i, header in enumerate(headers):
        if _matches(header, wanted):
            return i
    raise shape_error(what, f"no column {wanted!r} (columns: {list(headers)})")


def usd(cell: str) -> float | None:
    """The first US-dollar amount in a cell ("$2,048.50 / Hour" -> 2048.5), or None."""
    match = _USD.search(cell)
    return float(match.group(1).replace(",", "")) if match else None


def number(cell: str) -> float | None:
    """A plain number cell ("2,048" -> 2048.0); a dash or anything else is None."""
    cell = cell.strip()
    return float(cell.replace(",", "")) if _NUMBER.match(cell) else None


def blank(cell: str) -> bool:
    """A cell that says nothing: empty, a dash or run of dashes, "N/A"."""
    stripped = cell.strip()
    return stripped.casefold() in _BLANKS or not stripped.strip(_DASH_CHARS)


def not_a_price(cell: str) -> str | None:
    """Why a price cell holds no price ("Contact sales", blank, a dash), or None when it may hold one."""
    stripped = cell.strip()
    if _CONTACT.search(stripped):
        return f"no_price: {stripped!r} is a sales contact, not a price"
    if blank(stripped):
        return f"no_price: blank price cell {stripped!r}"
    if usd(stripped) is None:
        return f"no_price: {stripped!r} holds no dollar amount"
    return None


def require(items: Iterable, what: str) -> list:
    """The items as a list; none at all means the page no longer has what the parser reads."""
    found = list(items)
    if not found:
        raise shape_error(what, "nothing found")
    return found


def _holds_labels(labels: Sequence[str], required: Sequence[str]) -> bool:
    return len(labels) >= len(required) and all(_has(labels, wanted) for wanted in required)


def _template_rows(header_row: Tag, header_rows: Sequence[Tag]) -> list[Tag]:
    """The rows built from the header row's template, within the header row's own table."""
    classes = header_row.get("class")
    for container in header_row.parents:
        if any(h is not header_row and _inside(h, container) for h in header_rows):
            break  # reached a container of another table: this header has no rows of its own
        rows = [r for r in container.find_all(header_row.name) if r is not header_row and r.get("class") == classes]
        if rows:
            return rows
    return []


def _inside(node: Tag, container: Tag) -> bool:
    """Whether `node` lies within `container` (by identity: bs4 compares tags by their markup)."""
    return any(parent is container for parent in node.parents)


def _header(table: Tag) -> tuple[list[str], list[Tag]]:
    """The table's column labels and the <tr>s that carry them."""
    head = table.find("thead")
    if head is not None and head.find_parent("table") is table:
        rows = head.find_all("tr")
        if not rows:  # "<thead><th>…</th></thead>": cells straight under the head
            return [text(c) for c in head.find_all(["th", "td"], recursive=False)], []
    else:
        rows = []
        for tr in table.find_all("tr"):
            if tr.find_parent("table") is not table or tr.find("td", recursive=False) is not None:
                break
            rows.append(tr)
    grid: list[list[str]] = []
    pending: dict[int, tuple[str, int]] = {}  # column -> (label, rows it still spans)
    for tr in rows:
        line: list[str] = []
        cells = iter(tr.find_all(["th", "td"], recursive=False))
        col = 0
        while True:
            if col in pending:
                value, left = pending.pop(col)
                line.append(value)
                if left > 1:
                    pending[col] = (value, left - 1)
                col += 1
                continue
            cell = next(cells, None)
            if cell is None:
                break
            for _ in range(_span(cell, "colspan")):
                line.append(text(cell))
                if _span(cell, "rowspan") > 1:
                    pending[col] = (text(cell), _span(cell, "rowspan") - 1)
                col += 1
        grid.append(line)
    width = max((len(line) for line in grid), default=0)
    headers = []
    for col in range(width):
        parts: list[str] = []
        for line in grid:
            if col < len(line) and line[col] and line[col] not in parts:
                parts.append(line[col])
        headers.append(" / ".join(parts))
    return headers, rows


def _span(cell: Tag, attribute: str) -> int:
    value = str(cell.get(attribute) or "1").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 1


def _matches(header: str, wanted: str) -> bool:
    return same(header, wanted) or any(same(part, wanted) for part in header.split(" / "))


def _has(headers: Sequence[str], wanted: str) -> bool:
    return any(_matches(h, wanted) for h in headers)
