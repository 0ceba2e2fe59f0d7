"""Modal's pricing page, "GPU Tasks": serverless GPUs priced per GPU-second.

In the part of the page the heading "GPU Tasks" opens (read as a section, in document order,
however the markup nests the heading), each line pairs a label ("Nvidia H100 SXM5") with a price
("$0.001097 / sec"). The offers table prices by the hour, so the parser converts explicitly:
`price` = per-second price x 3,600, `price_unit` = gpu_hour, and the instance type keeps the
quoted figure ("Nvidia H100 SXM5 at $0.001097/s") so nothing is hidden. A price in any other unit
is rejected, not guessed.

What the page's prices are: the base rate. Modal's docs add region multipliers (1.5x for broad
regions such as "us", 1.75x for narrower ones; docs/guide/region-selection, via SkyPilot's
fetch_modal.py) on top of it; the base rate is the one that applies when no region is pinned, so
`region` is "global". A container takes 1 to 8 GPUs on one machine (4 for A10; docs/guide/gpu), all
at the same per-GPU rate, so one offer per GPU type stands for every count.

Labels outside the reviewed table go through the shared rules (`scrapers._gpus`). Those that do
not say the form factor ("Nvidia H200", "Nvidia A100, 80 GB") map to the family's stand-in
(`H200-141GB-AnyForm`, `A100-80GB-AnyForm`): an H200 may be SXM or NVL and an A100 SXM or PCIe,
and neither the page nor Modal's GPU guide says which, so the offer keeps the memory it does
state and claims no form factor rather than guessing one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO

from bs4 import Tag

from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.schemas.units import SECONDS_PER_HOUR
from gpucat.scrapers import _html
from gpucat.scrapers._gpus import mapped
from gpucat.scrapers.base import Fetcher, Source

HOST = "modal.com"
URL = f"https://{HOST}/pricing"
SECTION = "GPU Tasks"
_PER_SECOND = re.compile(r"^\$\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*(?:s|sec|second)\.?$", re.IGNORECASE)
_MEMORY = re.compile(r"(\d+)\s*GB")

GPU_LABELS: dict[str, str] = {
    "Nvidia B200": "B200",
    "Nvidia H100 SXM5": "H100-SXM",
    "Nvidia L40S": "L40S",
    "Nvidia A10": "A10",
    "Nvidia L4": "L4",
    "Nvidia T4": "T4",
    # names no edition (Workstation, Max-Q or Server): the stand-in, whose memory all three share
    "Nvidia RTX PRO 6000": "RTX-PRO-6000-AnyEdition",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    what = f"Modal {SECTION!r} price list"
    lines = _html.read_section(
        _html.page(body, "Modal pricing page"), SECTION, "Modal pricing page", lambda nodes: _html.require(_price_lines(nodes), f"{what}: label and '$... / sec' pairs")
    )
    for label, quote in lines:
        match = _PER_SECOND.match(quote)
        if match is None:
            yield Rejected("offers", (f"unexpected_unit: {quote!r} is not a price per second",), {"label": label, "price": quote})
            continue
        memory = _MEMORY.search(label)
        gpu_model, why = mapped(GPU_LABELS, label, provider="modal", memory_gb=float(memory.group(1)) if memory else None)
        if gpu_model is None:
            yield Rejected("offers", (why or f"unknown_gpu: {label!r}",), {"label": label, "price": quote})
            continue
        per_second = float(match.group(1))
        yield Offer(
            offer_id=f"{label}/on_demand",
            instance_type=f"{label} at ${match.group(1)}/s",
            region="global",
            market="on_demand",
            gpu_name=label,
            gpu_model=gpu_model,
            gpu_count=1.0,
            gpu_memory_gb=float(memory.group(1)) if memory else None,
            price=round(per_second * SECONDS_PER_HOUR, 6),
            price_unit="gpu_hour",
            currency="USD",
            availability="unknown",
        )


def _price_lines(nodes: list[Tag]) -> list[tuple[str, str]]:
    """(label, price) for each element of the section holding exactly a label and a price."""
    lines = []
    for node in nodes:
        parts = _html.children(node)
        if len(parts) == 2 and _html.text(parts[1]).startswith("$"):
            lines.append((_html.text(parts[0]), _html.text(parts[1])))
    return lines


SOURCE = Source(
    name="modal",
    provider="modal",
    description="Modal pricing page: serverless per-GPU-second base rates, converted to GPU-hours (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://modal.com/docs/guide/gpu",
    gpu_targets=frozenset(GPU_LABELS.values()) | {"H200-141GB-AnyForm", "A100-80GB-AnyForm", "A100-40GB-AnyForm"},
)
