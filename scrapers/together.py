"""Together AI's pricing page, GPU Clusters section: on-demand HGX clusters priced per GPU-hour.

The page has several tables. Only the ones under the heading "GPU Clusters" are GPU rental: the
"Dedicated Inference" table above it has the same row names ("NVIDIA HGX B200 $8.99") but prices a
managed model endpoint, not a machine, so it is never read. The section says "All prices are per
GPU per hour" above its table; the parser checks that sentence, because the price unit is the whole
difference between $3.99 and $31.92. Reserved terms are not a market the offers table models
(on_demand | spot), so only the on-demand column is read; its "Contact us"/dash cells are rejected,
never 0.

Traps the real page carries (capture of 2026-08-22, fixtures/together/together/NOTES.md):
- The heading sits alone in an accordion toggle: the unit sentence and the table are later
  siblings of its parent, so the parser reads the whole section the heading opens.
- The header has two rows: "Hardware" (rowspan 2), "ON-Demand" over "Pay as you go", and
  "Reserved" (colspan 4) over four durations; body rows with "Contact us" span all four.
- Body rows sit inside CMS wrappers (`div role=listitem`) inside <tbody>, not directly under it.
- A hidden duplicate table ("Hardware | Hourly") sits first in the section; it has no on-demand
  column, so the table with one is the one read.

Clusters come in multiples of 8 GPUs ("This must be multiple of 8", docs.together.ai/api-reference/
gpuclusterservice/create-gpu-cluster), so each offer is one 8-GPU HGX node at the per-GPU price.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.scrapers import _html
from gpucat.scrapers.base import Fetcher, Source

HOST = "www.together.ai"
URL = f"https://{HOST}/pricing"
SECTION = "GPU Clusters"
UNIT_NOTE = "per gpu per hour"
# The note as the page words it ("All prices are per GPU per hour.") and its near spellings ("per
# GPU-hour", "per GPU, per hour", "per GPU/hr"); "per node per hour" is another unit.
_UNIT_NOTE = re.compile(r"\bper\s+gpu\s*[-,/]?\s*(?:per\s+)?(?:hour|hr)\b", re.IGNORECASE)
HARDWARE, ON_DEMAND = "Hardware", "On-demand"
GPUS_PER_NODE = 8

GPU_NAMES: dict[str, str] = {
    "NVIDIA HGX H100": "H100-SXM",
    "NVIDIA HGX H200": "H200-SXM",
    "NVIDIA HGX B200": "B200",
    "NVIDIA HGX B300": "B300",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    what = f"Together {SECTION!r} table"
    headers, rows = _html.read_section(_html.page(body, "Together pricing page"), SECTION, "Together pricing page", lambda nodes: _table(nodes, what))
    hardware, on_demand = _html.column(headers, HARDWARE, what), _html.column(headers, ON_DEMAND, what)
    for cells in _html.require(rows, f"{what} rows"):
        name, quote = _html.text(cells[hardware]), _html.text(cells[on_demand])
        reason = _html.not_a_price(quote)
        if reason is not None:
            yield Rejected("offers", (f"on_demand {reason}",), {h: _html.text(c) for h, c in zip(headers, cells, strict=True)})
            continue
        yield Offer(
            offer_id=f"gpu-clusters/{name}/on_demand",
            instance_type=f"{name} cluster node ({GPUS_PER_NODE} GPUs)",
            region="global",
            market="on_demand",
            gpu_name=name,
            gpu_model=GPU_NAMES.get(name),
            gpu_count=float(GPUS_PER_NODE),
            price=_html.usd(quote),
            price_unit="gpu_hour",
            currency="USD",
            availability="unknown",
            # An HGX board joins its 8 GPUs through NVSwitch (developer.nvidia.com/blog/introducing-
            # nvidia-hgx-h100-...); the page states no inter-node fabric, so that stays unknown.
            interconnect="nvswitch" if "HGX" in name.split() else None,
        )


def _table(nodes: list, what: str) -> tuple[list[str], list[list]]:
    if not _UNIT_NOTE.search(_html.section_text(nodes)):
        raise ParseError(f"{what}: the note {UNIT_NOTE!r} that states the price unit is gone")
    return _html.table_by_headers(nodes, [HARDWARE, ON_DEMAND], what)


SOURCE = Source(
    name="together",
    provider="together",
    description="Together AI pricing page, GPU Clusters table: on-demand per-GPU-hour prices of 8-GPU HGX nodes (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://docs.together.ai/docs/gpu-clusters-billing",
    gpu_targets=frozenset(GPU_NAMES.values()),
)
