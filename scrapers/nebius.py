"""Nebius AI Cloud's price page: GPU presets priced per GPU-hour, on-demand and preemptible.

The page is built from "highlight table" blocks, each with a title; the one titled "NVIDIA GPU
Instances" has a header row ("Item", "vCPUs", "RAM, GB", "Preemptible, GPU-hour", "On-demand,
GPU-hour") and one row per GPU platform. vCPUs and RAM are per GPU: the 8-GPU H200 preset is
8gpu-128vcpu-1600gb and the 1-GPU one 1gpu-16vcpu-200gb (docs.nebius.com/signup-billing/
billing-changes-oct-2025), so each row is one 1-GPU offer at the per-GPU price.

Traps the page carries:
- Announced price changes: a cell reads "$3.85" with "$4.50 effective October 1, 2026" under it.
  The price kept is the one in force when the page was fetched: the announced one once its date
  has come, the current one before.
- "from $1.55" (L40S presets with a vCPU range) and "from $0.79" (preemptible) are the cheapest of
  several prices, not the price of one offer: rejected. Nebius says spot prices "may vary ... as
  frequently as every 15 minutes" (same page), so no preemptible figure here is an offer price.
- "Contact us" and a dash are not prices: rejected, never 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import IO

from bs4 import Tag

from schemas.errors import ParseError
from schemas.records import Offer, Page, ParseItem, Rejected
from scrapers import _html
from scrapers.base import Fetcher, Source

HOST = "nebius.com"
URL = f"https://{HOST}/prices"
TITLE = "NVIDIA GPU Instances"
ITEM, VCPUS, RAM, PREEMPTIBLE, ON_DEMAND = "Item", "vCPUs", "RAM, GB", "Preemptible, GPU-hour", "On-demand, GPU-hour"
MARKETS = {ON_DEMAND: "on_demand", PREEMPTIBLE: "spot"}
_BLOCK, _TITLE = "pc-highlight-table-block", "pc-highlight-table-block__title"
_HEAD, _BODY, _ROW, _CELL = (f"pc-highlight-table-block__{part}" for part in ("head", "body", "row", "cell"))
_SCHEDULED = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s+effective\s+([A-Z][a-z]+ \d{1,2}, \d{4})")
_FROM = re.compile(r"^from\s+\$", re.IGNORECASE)

GPU_NAMES: dict[str, str] = {
    "NVIDIA GB300 NVL72": "GB300",
    "NVIDIA GB200 NVL72": "GB200",
    "NVIDIA HGX B300": "B300",
    "NVIDIA HGX B200": "B200",
    "NVIDIA HGX H200": "H200-SXM",
    "NVIDIA HGX H100": "H100-SXM",
    "NVIDIA RTX PRO 6000": "RTX-PRO-6000",
    "NVIDIA L40S with Intel CPU": "L40S",
    "NVIDIA L40S with AMD CPU": "L40S",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    what = f"Nebius {TITLE!r} table"
    block = _block(_html.page(body, "Nebius price page"))
    head = block.find(class_=_HEAD)
    if head is None:
        raise ParseError(f"{what}: no header row ({_HEAD})")
    headers = [_html.text(c) for c in head.find_all(class_=_CELL)]
    columns = {label: _html.column(headers, label, what) for label in (ITEM, VCPUS, RAM, ON_DEMAND)}
    if any(label.casefold() == PREEMPTIBLE.casefold() for label in headers):
        columns[PREEMPTIBLE] = _html.column(headers, PREEMPTIBLE, what)
    table_body = block.find(class_=_BODY)
    rows = _html.require(table_body.find_all(class_=_ROW) if table_body is not None else [], f"{what} rows")
    for row in rows:
        cells = [_html.text(c) for c in row.find_all(class_=_CELL)]
        if len(cells) != len(headers):
            raise ParseError(f"{what}: a row has {len(cells)} cells under headers {headers}: {cells}")
        yield from _row_items(row, dict(zip(headers, cells, strict=True)), columns, url, fetched_at)


def _block(doc: Tag) -> Tag:
    titles = []
    for block in doc.find_all(class_=_BLOCK):
        title = _html.text(block.find(class_=_TITLE))
        if title.casefold() == TITLE.casefold():
            return block
        titles.append(title)
    raise ParseError(f"Nebius price page: no table block titled {TITLE!r} (blocks: {titles})")


def _row_items(row: Tag, cells: dict[str, str], columns: dict[str, int], url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    item = cells[ITEM]
    paragraphs = {label: [_html.text(p) for p in row.find_all(class_=_CELL)[index].find_all("p")] for label, index in columns.items()}
    reasons = []
    for label, market in MARKETS.items():
        if label not in columns:
            continue
        price, reason = _price_in_force(cells[label], paragraphs[label], fetched_at.date())
        if reason is not None:
            reasons.append(f"{market} {reason}")
            continue
        yield Offer(
            provider="nebius",
            offer_id=f"{item}/{market}",
            source=SOURCE.name,
            instance_type=f"{item}, 1 GPU",
            region="global",
            market=market,
            tier=None,
            gpu_name=item,
            gpu_model=GPU_NAMES.get(item),
            gpu_count=1.0,
            gpu_memory_gb=None,
            vcpus=_html.number(cells[VCPUS]),
            ram_gb=_html.number(cells[RAM]),
            price=price,
            price_unit="gpu_hour",
            currency="USD",
            availability="unknown",
            available_count=None,
            interconnect=None,
            fabric=None,
            fabric_gbps=None,
            source_url=url,
            scraped_at=fetched_at,
        )
    if reasons:  # one rejection per row, naming each market that has no usable price
        yield Rejected("offers", tuple(reasons), cells)


def _price_in_force(cell: str, paragraphs: list[str], today: date) -> tuple[float | None, str | None]:
    """The price in force on `today`, or why the cell holds none."""
    current = [p for p in paragraphs or [cell] if not _SCHEDULED.search(p)]
    quote = current[0] if current else ""
    if _FROM.match(quote):
        return None, f"price_lower_bound: {quote!r} is the cheapest of several presets or spot prices, not one offer's price"
    reason = _html.not_a_price(quote)
    if reason is not None:
        return None, reason
    price = _html.usd(quote)
    announced = sorted((datetime.strptime(when, "%B %d, %Y").date(), amount) for amount, when in _SCHEDULED.findall(cell))
    for effective, amount in announced:
        if effective <= today:
            price = float(amount.replace(",", ""))
    return price, None


SOURCE = Source(
    name="nebius",
    provider="nebius",
    description="Nebius price page: per-GPU-hour on-demand prices of GPU presets, announced changes applied by date (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://docs.nebius.com/compute/resources/pricing",
    gpu_targets=frozenset(GPU_NAMES.values()),
)
