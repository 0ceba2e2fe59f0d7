"""CoreWeave's public pricing page: on-demand and spot GPU node prices, one table per region.

The page is server-rendered (Webflow). Under the heading "On-demand GPU instances" each region has
a label ("REGION: NORTH AMERICA", "REGION: EUROPE") and a grid whose header row names the columns:
"GPU Model", "GPU Count", "VRAM (GB)", "vCPUs", "System RAM (GB)", "Local Storage (TB)",
"On-Demand Price (Per Hour)", "Spot Price (Per Hour)" and, in North America only, an inference price
(footnote 2: for inference-platform customers only, so never read). Prices are per instance-hour
for the whole node; the GPU price includes the host's vCPUs, RAM and local storage
(docs.coreweave.com/resources/billing-and-charges). Traps the real page carries (capture of
2026-08-22, fixtures/coreweave/coreweave/NOTES.md):

- The region label and the grid sit outside the heading's parent, so the parser reads the whole
  section the heading opens, in document order: each grid belongs to the region label before it.
- Each row repeats its values in cells for the mobile layout, so a row has more cells than the
  header; only the cells of the header cells' kind are columns.
- GPU counts carry a footnote marker: "4^1" as served, "4<sup>1</sup>" once the page's script runs.
- "Contact sales" is not a price: that market is rejected, while the other market of the same row
  may still be an offer (HGX B300: on-demand by contact, spot priced). "N/A" in the spot column
  means no spot market for that node: counted as skipped, not rejected.
- The CPU section below reuses the same grid markup and region labels; it is never read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO

from bs4 import Tag

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.scrapers import _html
from gpucat.scrapers.base import Fetcher, Source

HOST = "www.coreweave.com"
URL = f"https://{HOST}/pricing"
SECTION = "On-demand GPU instances"
NAME, COUNT, VRAM, VCPUS, RAM = "GPU Model", "GPU Count", "VRAM (GB)", "vCPUs", "System RAM (GB)"
ON_DEMAND, SPOT = "On-Demand Price (Per Hour)", "Spot Price (Per Hour)"
MARKETS = {ON_DEMAND: "on_demand", SPOT: "spot"}
_REGION = re.compile(r"^region\s*:\s*(.{1,40})$", re.IGNORECASE)

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
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "RTX-PRO-6000-Server",
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
    what = f"CoreWeave {SECTION!r}"
    doc = _html.page(body, "CoreWeave pricing page")
    grids, regions = _html.read_section(doc, SECTION, "CoreWeave pricing page", lambda nodes: _grids(nodes, what))
    no_spot: list[str] = []
    for grid, region in zip(grids, regions, strict=True):
        columns = {label: _html.column(grid.headers, label, f"{what}, {region}") for label in (NAME, COUNT, VRAM, VCPUS, RAM)}
        markets = {market: i for i, header in enumerate(grid.headers) for label, market in MARKETS.items() if _html.same(header, label)}
        for cells in _html.require(grid.rows, f"{what}, {region} rows"):
            yield from _row_items(cells, grid.headers, columns, markets, region, no_spot)
    if no_spot:
        yield Skipped("no_spot_market: the spot column reads 'N/A'", len(no_spot), tuple(no_spot[:5]))


def _grids(nodes: list[Tag], what: str) -> tuple[list[_html.Grid], list[str]]:
    grids = _html.grids_by_headers(nodes, [NAME, COUNT, ON_DEMAND], what)
    return grids, _regions(nodes, grids, what)


def _regions(nodes: list[Tag], grids: list[_html.Grid], what: str) -> list[str]:
    """The region label that precedes each grid in the section."""
    starts = {id(grid.header_row): grid for grid in grids}
    found: dict[int, str] = {}
    region = None
    for node in nodes:
        match = _REGION.match(_html.text(node))
        if match and not any(isinstance(c, Tag) and _REGION.match(_html.text(c)) for c in node.children):
            region = match.group(1).strip()
        if id(node) in starts:
            if region is None:
                raise ParseError(f"{what}: no 'Region: ...' label before the table headed {starts[id(node)].headers}")
            found[id(node)] = region
    return [found[id(grid.header_row)] for grid in grids]


def _row_items(cells: list[Tag], headers: list[str], columns: dict[str, int], markets: dict[str, int], region: str, no_spot: list[str]) -> Iterator[ParseItem]:
    name = _html.text(cells[columns[NAME]])
    row = {header: _html.text(cell) for header, cell in zip(headers, cells, strict=True)} | {"region": region}
    count = _html.number(_html.own_text(cells[columns[COUNT]]))
    for market, index in markets.items():
        quote = _html.text(cells[index])
        if market == "spot" and _html.blank(quote):
            no_spot.append(f"{region}: {name}")
            continue
        reason = _html.not_a_price(quote)
        if reason is None and not count:
            reason = f"no_gpu_count: {row[headers[columns[COUNT]]]!r}"
        if reason is not None:
            yield Rejected("offers", (f"{market} {reason}",), row)
            continue
        yield _offer(name, cells, columns, count, market, _html.usd(quote), region)


def _offer(name: str, cells: list[Tag], columns: dict[str, int], count: float, market: str, price: float, region: str) -> Offer:
    vram = _html.number(_html.text(cells[columns[VRAM]]))
    vcpus = _html.number(_html.text(cells[columns[VCPUS]]))
    ram = _html.number(_html.text(cells[columns[RAM]]))
    return Offer(
        offer_id=f"{_slug(region)}/{name}/{market}",
        instance_type=name,
        region=_slug(region),
        market=market,
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
        interconnect="nvswitch" if name in NVSWITCH_NAMES and count > 1 else None,
        fabric="infiniband" if name in INFINIBAND_NAMES else None,
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
