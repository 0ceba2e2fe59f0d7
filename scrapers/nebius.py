"""Nebius AI Cloud's price page: GPU presets priced per GPU-hour, on-demand and preemptible.

The page is built from "highlight table" blocks, each with a title; the one titled "NVIDIA GPU
Instances" has a header row ("Item", "vCPUs", "RAM, GB", "Preemptible, GPU-hour", "On-demand,
GPU-hour") and one row per GPU platform. vCPUs and RAM are per GPU: the 8-GPU H200 preset is
8gpu-128vcpu-1600gb and the 1-GPU one 1gpu-16vcpu-200gb (docs.nebius.com/signup-billing/
billing-changes-oct-2025), so each row is one 1-GPU offer at the per-GPU price.

The page is a Next.js app: the same blocks travel as page-constructor JSON inside the page's
scripts (escaped once, as a JavaScript string), which is the form the public capture of 2026-08-22
holds (fixtures/nebius/nebius/NOTES.md). The parser reads the rendered blocks when the body has
them and the embedded JSON otherwise; both give the same title, header and cells.

Traps the page carries:
- Firm preemptible prices ("$2.15") beside "from $" ones: only some rows (the L40S presets, whose
  vCPUs span a range) say "from $0.90", the cheapest of several presets. Each cell is judged on its
  own: a firm price is an offer, a "from" price is rejected as a lower bound.
- Announced price changes come as an extra column, "GPU-hour (Effective October 1, 2026)": from its
  date on, that column is the on-demand price; before it, the standing column is.
- "Contact us" (as text, or as the markdown link "[Contact us](#ai-contact-form)" in the JSON) and
  dashes ("––") are not prices: rejected, never 0. Footnote marks ("Free^*^") are dropped.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import IO

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.scrapers import _html
from gpucat.scrapers.base import Fetcher, Source

HOST = "nebius.com"
URL = f"https://{HOST}/prices"
TITLE = "NVIDIA GPU Instances"
ITEM, VCPUS, RAM, PREEMPTIBLE, ON_DEMAND = "Item", "vCPUs", "RAM, GB", "Preemptible, GPU-hour", "On-demand, GPU-hour"
MARKETS = {ON_DEMAND: "on_demand", PREEMPTIBLE: "spot"}
_BLOCK, _TITLE, _ROW, _CELL, _HEAD = (f"pc-highlight-table-block{part}" for part in ("", "__title", "__row", "__cell", "__head"))
_JSON_BLOCK = re.compile(r'\{\s*"type"\s*:\s*"highlight-table-block"')
_EFFECTIVE = re.compile(r"effective\s+([A-Z][a-z]+ \d{1,2}, \d{4})", re.IGNORECASE)
_FROM = re.compile(r"^from\s+\$", re.IGNORECASE)
_IN_CELL = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s+effective\s+([A-Za-z]+ \d{1,2}, \d{4})", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARK = re.compile(r"\^[^^\s]*\^")
_JS_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")

GPU_NAMES: dict[str, str] = {
    "NVIDIA GB300 NVL72": "GB300",
    "NVIDIA GB200 NVL72": "GB200",
    "NVIDIA HGX B300": "B300",
    "NVIDIA HGX B200": "B200",
    "NVIDIA HGX H200": "H200-SXM",
    "NVIDIA HGX H100": "H100-SXM",
    # names no edition (Workstation, Max-Q or Server): the stand-in, whose memory all three share
    "NVIDIA RTX PRO 6000": "RTX-PRO-6000-AnyEdition",
    "NVIDIA L40S with Intel CPU": "L40S",
    "NVIDIA L40S with AMD CPU": "L40S",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    what = f"Nebius {TITLE!r} table"
    raw = body.read()
    tables = _html_tables(raw) or _json_tables(raw)
    if not tables:
        raise ParseError("Nebius price page: no highlight-table blocks, rendered or as page-constructor JSON")
    found = [title for title, _ in tables]
    content = next((rows for title, rows in tables if _html.same(title, TITLE)), None)
    if content is None:
        raise ParseError(f"Nebius price page: no table block titled {TITLE!r} (blocks: {found})")
    if not content:
        raise ParseError(f"{what}: no header row")
    headers, rows = content[0], content[1:]
    columns = {label: _html.column(headers, label, what) for label in (ITEM, VCPUS, RAM, ON_DEMAND)}
    if any(_html.same(h, PREEMPTIBLE) for h in headers):
        columns[PREEMPTIBLE] = _html.column(headers, PREEMPTIBLE, what)
    announced = _announced_column(headers, fetched_at.date())
    for cells in _html.require(rows, f"{what} rows"):
        if len(cells) != len(headers):
            raise ParseError(f"{what}: a row has {len(cells)} cells under headers {headers}: {cells}")
        yield from _row_items(cells, headers, columns, announced, fetched_at)


def _html_tables(raw: bytes) -> list[tuple[str, list[list[str]]]]:
    """(title, rows of cell texts) of each rendered highlight-table block, header row first."""
    doc = _html.page(io.BytesIO(raw), "Nebius price page")
    tables = []
    for block in doc.find_all(class_=_BLOCK):
        title = block.find(class_=_TITLE) or block.find_previous(_html.HEADINGS)
        rows = block.find_all(class_=_ROW)
        head = block.find(class_=_HEAD)
        if head is not None and head.find(class_=_ROW) is None:
            rows = [head, *rows]
        tables.append((_html.text(title), [[_cell(_html.text(c)) for c in row.find_all(class_=_CELL)] for row in rows]))
    return tables


def _json_tables(raw: bytes) -> list[tuple[str, list[list[str]]]]:
    """(title, rows) of each highlight-table block in the page-constructor JSON the page embeds,
    escaped once as a JavaScript string in the page's scripts or not."""
    text = raw.decode("utf-8", errors="replace")
    if not _JSON_BLOCK.search(text):
        text = _JS_ESCAPE.sub(_unescape, text)
    decoder = json.JSONDecoder()
    tables = []
    for start in (m.start() for m in _JSON_BLOCK.finditer(text)):
        block, _ = decoder.raw_decode(text, start)  # unreadable: the frame fails the page, naming why
        content = block["table"]["content"]
        tables.append((str(block.get("title", "")), [[_cell(str(c)) for c in row] for row in content]))
    return tables


def _unescape(match: re.Match) -> str:
    escaped = match.group(1)
    if escaped.startswith("u") and len(escaped) == 5:
        return chr(int(escaped[1:], 16))
    return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(escaped, escaped)


def _cell(value: str) -> str:
    """A cell as a reader sees it: markdown links as their text, footnote marks dropped."""
    return _MARK.sub("", _LINK.sub(r"\1", value)).strip()


def _announced_column(headers: list[str], today: date) -> int | None:
    """The column of an announced on-demand price already in force on `today`, if any (the latest)."""
    in_force = []
    for index, header in enumerate(headers):
        match = _EFFECTIVE.search(header)
        if match and "preemptible" not in header.casefold():
            effective = datetime.strptime(match.group(1).title(), "%B %d, %Y").date()
            if effective <= today:
                in_force.append((effective, index))
    return max(in_force)[1] if in_force else None


def _row_items(cells: list[str], headers: list[str], columns: dict[str, int], announced: int | None, fetched_at: datetime) -> Iterator[ParseItem]:
    item = cells[columns[ITEM]]
    reasons = []
    for label, market in MARKETS.items():
        if label not in columns:
            continue
        index = announced if market == "on_demand" and announced is not None else columns[label]
        price, reason = _price(cells[index], fetched_at.date())
        if reason is not None:
            reasons.append(f"{market} {reason}")
            continue
        yield Offer(
            offer_id=f"{item}/{market}",
            instance_type=f"{item}, 1 GPU",
            region="global",
            market=market,
            gpu_name=item,
            gpu_model=GPU_NAMES.get(item),
            gpu_count=1.0,
            vcpus=_html.number(cells[columns[VCPUS]]),
            ram_gb=_html.number(cells[columns[RAM]]),
            price=price,
            price_unit="gpu_hour",
            currency="USD",
            availability="unknown",
        )
    if reasons:  # one rejection per row, naming each market that has no usable price
        yield Rejected("offers", tuple(reasons), dict(zip(headers, cells, strict=True)))


def _price(quote: str, today: date) -> tuple[float | None, str | None]:
    """The firm price a cell states (an announcement inside the cell, "$4.50 effective October 1,
    2026", counts from its date on), or why it states none."""
    announced = [(datetime.strptime(when.title(), "%B %d, %Y").date(), amount) for amount, when in _IN_CELL.findall(quote)]
    current = _IN_CELL.sub("", quote).strip()
    if _FROM.match(current):
        return None, f"price_lower_bound: {current!r} is the cheapest of several presets, not one offer's price"
    reason = _html.not_a_price(current)
    if reason is not None:
        return None, reason
    price = _html.usd(current)
    for effective, amount in sorted(announced):
        if effective <= today:
            price = float(amount.replace(",", ""))
    return price, None


SOURCE = Source(
    name="nebius",
    provider="nebius",
    description="Nebius price page: per-GPU-hour on-demand and preemptible prices of GPU presets, announced price columns applied by date (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://docs.nebius.com/compute/resources/pricing",
    gpu_targets=frozenset(GPU_NAMES.values()),
)
