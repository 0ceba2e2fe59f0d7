"""CoreWeave's public pricing page: on-demand GPU instances per region, whole-node prices, spot beside them.

The page is server-rendered (Webflow). Under the heading "On-demand GPU instances" a region label
("Region: North America") precedes a grid whose header row names the columns ("GPU Count",
"Instance Price Per Hour", ...); each row is one node type. Prices are per instance-hour
for the whole node; the GPU price includes the host's vCPUs, RAM and local storage
(docs.coreweave.com/resources/billing-and-charges). A spot price, where offered, sits in the price
cell as "Spot Price: $19.71 / Hour". "Contact sales" is not a price: that market is rejected,
while the other market of the same row may still be an offer (HGX B300: on-demand by contact,
spot priced). CPU instances are a separate section and never read.
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

HOST = "www.coreweave.com"
URL = f"https://{HOST}/pricing"
SECTION = "On-demand GPU instances"
NAME, COUNT, VRAM, VCPUS, RAM, PRICE = "Instance", "GPU Count", "VRAM (GB)", "vCPUs", "System RAM (GB)", "Instance Price Per Hour"
_REGION = re.compile(r"^Region:\s*(.+)$")
_SPOT = re.compile(r"Spot Price:\s*(\$\s*[0-9][0-9,]*(?:\.[0-9]+)?)\s*/\s*Hour", re.IGNORECASE)

# Page name -> canonical gpu_model. "NVIDIA A100" rows are 8 x A100 80GB HGX nodes: "The A100 HGX
# nodes are each equipped with 8x NVIDIA A100 80GB" (docs.coreweave.com/networking/hpc-interconnect),
# so the 80 GB row is the SXM4 part; any other VRAM on that name stays unmapped.
GPU_NAMES: dict[str, str] = {
    "NVIDIA GB200 NVL72": "GB200",
    "NVIDIA GB300 NVL72": "GB300",
    "NVIDIA HGX B300": "B300",
    "NVIDIA HGX B200": "B200",
    "NVIDIA HGX H200": "H200-SXM",
    "NVIDIA HGX H100": "H100-SXM",
    "NVIDIA GH200": "GH200",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "RTX-PRO-6000",
    "NVIDIA L40S": "L40S",
    "NVIDIA L40": "L40",
}
A100 = ("NVIDIA A100", 80.0, "A100-SXM4-80GB")
# Within a node: an HGX baseboard joins its 8 GPUs through NVSwitch ("HGX H100 8-GPU ... hosts eight
# H100 Tensor Core GPUs and four third-generation NVSwitch", developer.nvidia.com/blog/introducing-
# nvidia-hgx-h100-...); CoreWeave's A100 nodes are "A100 HGX" (docs above); GB200 instances use "the
# NVLink Switch System" (docs.coreweave.com/docs/platform/instances/gb200).
NVSWITCH_NAMES = frozenset({"NVIDIA HGX B300", "NVIDIA HGX B200", "NVIDIA HGX H200", "NVIDIA HGX H100", "NVIDIA A100", "NVIDIA GB200 NVL72"})
# Between nodes: "All CoreWeave A100 NVLINK GPUs offer GPUDirect RDMA over InfiniBand" (hpc-interconnect
# doc above). No cited page states the fabric of the other node types, so theirs stays unknown.
INFINIBAND_NAMES = frozenset({"NVIDIA A100"})


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    doc = _html.page(body, "CoreWeave pricing page")
    section = _html.heading(doc, SECTION, "CoreWeave pricing page").parent
    region = _region(section)
    headers, rows = _html.grid_by_headers(section, [COUNT, PRICE], f"CoreWeave {SECTION!r}")
    columns = {label: _html.column(headers, label, f"CoreWeave {SECTION!r}") for label in (COUNT, VRAM, VCPUS, RAM, PRICE)}
    _html.require(rows, f"CoreWeave {SECTION!r} rows")
    for cells in rows:
        yield from _row_items(cells, headers, columns, region, url, fetched_at)


def _region(section: Tag) -> str:
    for string in section.find_all(string=_REGION):
        return _REGION.match(string.strip()).group(1).strip()
    raise ParseError(f"CoreWeave {SECTION!r}: no 'Region: ...' label")


def _row_items(cells: list[Tag], headers: list[str], columns: dict[str, int], region: str, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    name = _html.text(cells[0])
    row = {header: _html.text(cell) for header, cell in zip(headers, cells, strict=True)} | {"region": region}
    price_cell = _html.text(cells[columns[PRICE]])
    spot = _SPOT.search(price_cell)
    quotes = {"on_demand": price_cell[: spot.start()].strip() if spot else price_cell, "spot": spot.group(1) if spot else None}
    count = _html.number(_html.own_text(cells[columns[COUNT]]))
    for market, quote in quotes.items():
        if quote is None:
            continue  # no spot market on this row
        reason = _html.not_a_price(quote)
        if reason is None and not count:
            reason = f"no_gpu_count: {row[COUNT]!r}"
        if reason is not None:
            yield Rejected("offers", (f"{market} {reason}",), row)
            continue
        yield _offer(name, cells, columns, count, market, _html.usd(quote), region, url, fetched_at)


def _offer(name: str, cells: list[Tag], columns: dict[str, int], count: float, market: str, price: float, region: str, url: str, fetched_at: datetime) -> Offer:
    vram = _html.number(_html.text(cells[columns[VRAM]]))
    vcpus = _html.number(_html.text(cells[columns[VCPUS]]))
    ram = _html.number(_html.text(cells[columns[RAM]]))
    return Offer(
        provider="coreweave",
        offer_id=f"{_slug(region)}/{name}/{market}",
        source=SOURCE.name,
        instance_type=name,
        region=_slug(region),
        market=market,
        tier=None,
        gpu_name=name,
        gpu_model=_gpu_model(name, vram),
        gpu_count=count,
        gpu_memory_gb=vram,
        vcpus=vcpus,
        ram_gb=ram,
        price=price,
        price_unit="instance_hour",
        currency="USD",
        availability="unknown",
        available_count=None,
        interconnect="nvswitch" if name in NVSWITCH_NAMES and count > 1 else None,
        fabric="infiniband" if name in INFINIBAND_NAMES else None,
        fabric_gbps=None,
        source_url=url,
        scraped_at=fetched_at,
    )


def _gpu_model(name: str, vram: float | None) -> str | None:
    if name == A100[0]:
        return A100[2] if vram == A100[1] else None
    return GPU_NAMES.get(name)


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


SOURCE = Source(
    name="coreweave",
    provider="coreweave",
    description="CoreWeave pricing page: on-demand and spot whole-node prices per region (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://docs.coreweave.com/resources/billing-and-charges",
    gpu_targets=frozenset({*GPU_NAMES.values(), A100[2]}),
)
