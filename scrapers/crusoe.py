"""Crusoe Cloud's pricing page: one card per GPU, priced per GPU-hour, on-demand and spot.

The page is server-rendered (Webflow). Each GPU is a card: a heading ("NVIDIA H100"), tags with
its memory and form factor ("80GB", "HGX"), then one price block per column of the card list's
header row ("On-demand", "Spot"), e.g. "$3.90/GPU-hr". Crusoe's API lists instance shapes but no
prices, which is why this page is the price source (shared/reference/providers.md, Crusoe).

"Contact sales" is not a price: that market of the card is rejected with the reason, never 0
(every spot price, and B200/GB200 on-demand, read "Contact sales" in the 2026-09-20 transcription).
A price in any unit other than "/GPU-hr" is rejected too rather than guessed into GPU-hours.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO

from bs4 import Tag

from schemas.errors import ParseError
from schemas.records import Offer, Page, ParseItem, Rejected
from scrapers import _html
from scrapers.base import Fetcher, Source

HOST = "www.crusoe.ai"
URL = f"https://{HOST}/cloud/pricing"
CARD, HEADING, TAG, PRICE = "pricing_gpu-item", "pricing-item-heading", "pricing-tag", "pricing-rich"
MARKETS = {"on-demand": "on_demand", "spot": "spot"}
_PER_GPU_HOUR = re.compile(r"^\$\s*[0-9][0-9,]*(?:\.[0-9]+)?\s*/\s*GPU-hr$", re.IGNORECASE)
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
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    doc = _html.page(body, "Crusoe pricing page")
    cards = _html.require(doc.find_all(class_=CARD), f"Crusoe pricing page: GPU cards (.{CARD})")
    markets = _column_markets(cards[0])
    for card in cards:
        yield from _card_items(card, markets, url, fetched_at)


def _column_markets(first_card: Tag) -> list[str]:
    """The market of each price block, from the header row that labels the card list's columns."""
    section = first_card.find_parent("section") or first_card.parent
    for node in section.find_all(True):
        labels = [_html.text(c).casefold() for c in node.children if isinstance(c, Tag)]
        if all(label in labels for label in MARKETS):
            return [MARKETS[label] for label in labels if label in MARKETS]
    raise ParseError(f"Crusoe GPU pricing: no header row labelling the columns {list(MARKETS)}")


def _card_items(card: Tag, markets: list[str], url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    heading = card.find(class_=HEADING)
    if heading is None:
        raise ParseError(f"Crusoe GPU card without a heading (.{HEADING}): {_html.text(card)!r}")
    name = _html.text(heading)
    tags = [_html.text(t) for t in card.find_all(class_=TAG)]
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
            provider="crusoe",
            offer_id=f"{gpu_name}/{market}",
            source=SOURCE.name,
            instance_type=f"{gpu_name}, per GPU",
            region="global",
            market=market,
            tier=None,
            gpu_name=gpu_name,
            gpu_model=GPU_CARDS.get((name, form, memory)) if memory is not None else None,
            gpu_count=1.0,
            gpu_memory_gb=memory,
            vcpus=None,
            ram_gb=None,
            price=_html.usd(quote),
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
