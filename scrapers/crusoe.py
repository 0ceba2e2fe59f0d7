"""Crusoe Cloud's pricing page: one card per GPU, priced per GPU-hour, on-demand and spot.

The page is server-rendered (Webflow). The GPU table is a header row, "GPU model | On-demand |
Current spot", above a list of cards: a heading ("NVIDIA H100"), tags with its memory and form factor
("80GB", "HGX"; the L40S and AMD cards have an empty form-factor tag), then one price block per
market column, e.g. "$3.90/GPU-hr". Crusoe's API lists instance shapes but no prices, which is why
this page is the price source (shared/reference/providers.md, Crusoe).

Traps the real page carries (capture of 2026-08-22, fixtures/crusoe/crusoe/NOTES.md):
- The card markup of the GPU table is reused by every other table on the page: CPU instances,
  storage, managed Kubernetes, fine-tuning, serverless inference and Self-Serve Deployments, whose
  "NVIDIA H100 80GB HGX" card is a managed endpoint at $5.50/hour, not a GPU rental. Only cards
  under the GPU table's own header row are read; every other card is counted as skipped.
- The spot column is headed "Current spot", not "Spot": a column is a market when its label says
  "on-demand" or "spot"; any other column label is a changed layout and fails the page.
- "Contact sales" is not a price: that market of the card is rejected with the reason, never 0
  (every spot price, and GB200/B200/MI355X on-demand, read "Contact sales" on 2026-08-22). A price
  in any unit other than "/GPU-hr" is rejected too rather than guessed into GPU-hours.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO

from bs4 import BeautifulSoup, Tag

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.scrapers import _html
from gpucat.scrapers.base import Fetcher, Source

HOST = "www.crusoe.ai"
URL = f"https://{HOST}/cloud/pricing"
CARD, HEADING, TAG, PRICE = "pricing_gpu-item", "pricing-item-heading", "pricing-tag", "pricing-rich"
FIRST_COLUMNS = ("GPU model", "GPU")
# "$3.90/GPU-hr" as the page says it, and its near spellings ("$3.90 / GPU-hour", "$3.90/GPU/hr",
# "$3.90 per GPU hour"); a price per hour without "GPU" or per instance is another unit.
_PER_GPU_HOUR = re.compile(r"^\$\s*[0-9][0-9,]*(?:\.[0-9]+)?\s*(?:/|per)\s*GPU\s*[-/]?\s*(?:hr|hour)s?\.?[*†‡¹²³⁴⁵⁶⁷⁸⁹⁰]*$", re.IGNORECASE)
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*GB$", re.IGNORECASE)

# (heading, form-factor tag, memory tag) -> canonical gpu_model. The tag decides the form factor:
# the A100 is sold as both "SXM" and "PCIe" cards; HGX boards carry SXM modules.
GPU_CARDS: dict[tuple[str, str | None, float], str] = {
    ("NVIDIA GB200", "NVL72", 186.0): "GB200",
    ("NVIDIA B200", "HGX", 180.0): "B200",
    ("NVIDIA H200", "HGX", 141.0): "H200-SXM",
    ("NVIDIA H100", "HGX", 80.0): "H100-SXM",
    ("NVIDIA A100", "SXM", 80.0): "A100-SXM4-80GB",
    ("NVIDIA A100", "PCIe", 80.0): "A100-PCIe-80GB",
    ("NVIDIA L40S", None, 48.0): "L40S",
    ("AMD MI300X", None, 192.0): "MI300X",
    ("AMD MI355X", None, 288.0): "MI355X",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    doc = _html.page(body, "Crusoe pricing page")
    header, markets = _gpu_header(doc)
    everything = doc.find_all(class_=CARD)
    # Cards under this header row, or under a copy of it (a page may repeat a header for another layout).
    cards = [card for card in everything if (owner := _header_above(card, header)) is not None and header_text(owner) == header_text(header)]
    if not cards:
        raise ParseError(f"Crusoe GPU table {header_text(header)!r}: no GPU cards (.{CARD}) under the header row")
    for card in cards:
        yield from _card_items(card, markets)
    mine = {id(c) for c in cards}
    others = [c for c in everything if id(c) not in mine]
    if others:
        examples = tuple(f"{_section_of(c)}: {_html.text(c.find(class_=HEADING))}" for c in others[:5])
        yield Skipped("not_gpu_rental: a card outside the GPU model / On-demand / spot table", len(others), examples)


def header_text(header: Tag) -> str:
    return " | ".join(_html.text(c) for c in _html.children(header))


def _gpu_header(doc: BeautifulSoup) -> tuple[Tag, list[str]]:
    """The row labelling the GPU table's columns, and the market of each price column after the first."""
    for node in doc.find_all(True):
        labels = [_html.text(c) for c in _html.children(node)]
        if len(labels) < 2 or not any(_html.same(labels[0], first) for first in FIRST_COLUMNS):
            continue
        markets = [_market(text) for text in labels[1:]]
        if "on_demand" not in markets:
            continue  # another table's header ("GPU type | Price per hour"): not the rental table
        if None in markets:
            raise ParseError(f"Crusoe GPU table: column {labels[1 + markets.index(None)]!r} is neither on-demand nor spot (header: {labels})")
        return node, markets
    raise ParseError("Crusoe pricing page: no header row 'GPU model' | 'On-demand' | '... spot' above the GPU cards")


def _market(column: str) -> str | None:
    words = _html.label(column)
    if words in ("on-demand", "on demand"):
        return "on_demand"
    return "spot" if "spot" in words.split() else None


def _header_above(card: Tag, header: Tag) -> Tag | None:
    """The header row of the table a card belongs to: the row of the nearest column label above it
    (a label cell of the kind the GPU header row is made of)."""
    kind = _html.children(header)[0].get("class")
    cell = card.find_previous(lambda tag: tag.get("class") == kind)
    return cell.parent if cell is not None else None


def _section_of(card: Tag) -> str:
    title = card.find_previous(["h1", "h2", "h3"])
    return _html.text(title) if title is not None else "?"


def _card_items(card: Tag, markets: list[str]) -> Iterator[ParseItem]:
    heading = card.find(class_=HEADING)
    if heading is None:
        raise ParseError(f"Crusoe GPU card without a heading (.{HEADING}): {_html.text(card)!r}")
    name = _html.text(heading)
    tags = [t for t in (_html.text(tag) for tag in card.find_all(class_=TAG)) if t]
    memory = next((float(m.group(1)) for t in tags if (m := _MEMORY.match(t))), None)
    form = next((t for t in tags if not _MEMORY.match(t)), None)
    quotes = [_html.text(block) for block in card.find_all(class_=PRICE)]
    row = {"name": name, "tags": tags, "prices": quotes}
    if len(quotes) != len(markets):
        raise ParseError(f"Crusoe GPU card {name!r} has {len(quotes)} price blocks for columns {markets}")
    gpu_name = " ".join([name, *tags])
    reasons = []
    for market, quote in zip(markets, quotes, strict=True):
        reason = _html.not_a_price(quote)
        if reason is None and not _PER_GPU_HOUR.match(quote):
            reason = f"unexpected_unit: {quote!r} is not priced per GPU-hour"
        if reason is not None:
            reasons.append(f"{market} {reason}")
            continue
        yield Offer(
            offer_id=f"{gpu_name}/{market}",
            instance_type=f"{gpu_name}, per GPU",
            region="global",
            market=market,
            gpu_name=gpu_name,
            gpu_model=GPU_CARDS.get((name, form, memory)) if memory is not None else None,
            gpu_count=1.0,
            gpu_memory_gb=memory,
            price=_html.usd(quote),
            price_unit="gpu_hour",
            currency="USD",
            availability="unknown",
        )
    if reasons:  # one rejection per card, naming each market that has no usable price
        yield Rejected("offers", tuple(reasons), row)


SOURCE = Source(
    name="crusoe",
    provider="crusoe",
    description="Crusoe Cloud pricing page: per-GPU-hour on-demand prices per GPU card; 'Contact sales' rejected (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST, "crusoe.ai"}),
    fetch=fetch,
    parse=parse,
    docs_url="https://docs.crusoecloud.com/",
    gpu_targets=frozenset(GPU_CARDS.values()),
)
