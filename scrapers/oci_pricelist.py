"""Oracle Cloud (OCI) price list: GPU parts priced per GPU-hour, joined to the shapes that bill them.

The public cetools products list (`{"lastUpdated": …, "items": [...]}`, no key) prices GPU
capacity by part number ("GPU Per Hour"), not by shape. A reviewed table below says which
shapes each part bills and what those shapes hold; a shape's price is the part's rate times its
GPU count. OCI prices are the same in every commercial region and Oracle publishes no stock, so
each offer is `region="global"` with availability `unknown`. There is no spot offer: OCI's
preemptible capacity is half price, but only on shapes that allow it, and SkyPilot's catalog
(built from the estimator's `allowPreemptible`) lists no preemptible price for any shape below.

Not rental offers, skipped: parts that are not billed per GPU-hour (OCPU, memory, storage…),
NVIDIA AI Enterprise licences (same category and metric as the rentals), and VMware,
Cloud@Customer, Roving Edge and commit parts. A GPU-hour rental part missing from the table is
rejected as `unknown_gpu` with its display name, never guessed from the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, ParseItem, Rejected
from gpucat.scrapers import _json
from gpucat.scrapers.base import Fetcher, Page, Source, each_record

HOST = "apexapps.oracle.com"
URL = f"https://{HOST}/pls/apex/cetools/api/v1/products/"
PARAMS = {"currencyCode": "USD"}
GPU_METRIC = "GPU Per Hour"
PRICE_MODEL = "PAY_AS_YOU_GO"
# Product lines that are not public cloud rentals, matched on display name and category.
_NOT_RENTAL = re.compile(r"VMware|Cloud@Customer|Roving Edge|Commit|NVIDIA AI Enterprise", re.IGNORECASE)


@dataclass(frozen=True)
class Shape:
    name: str
    gpu_model: str
    gpu_count: int
    gpu_memory_gb: float
    vcpus: float  # OCPUs x 2 on x86, x 1 on Arm (Grace)
    ram_gb: float  # as OCI states it ("GB"); the catalog above calls the same figures GiB
    interconnect: str | None


# Part number -> the shapes it bills. Reviewed 2026-12 against:
#  - part numbers and display names: the cetools list (fixtures/oci/oci-pricelist/products.json);
#  - shape contents (GPUs, vCPUs, memory): skypilot-org/skypilot-catalog catalogs/v8/oci/vms.csv,
#    built from Oracle's cost-estimator shapes.json (its prices equal part rate x GPU count for
#    every shape below, which is how each part was matched to its shapes);
#  - per-GPU memory: skypilot sky/catalog/data_fetchers/fetch_oci.py GPU_MEMORY_GB, from
#    https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm
#    (B300: 2100 GB / 8 there).
# Form factors: the 8-GPU H100/H200/A100 shapes are HGX baseboards with NVSwitch, hence SXM.
# Not mapped (form factor or shape unreviewed), so rejected: B109480 H100T, B88517/B88518 (X7,
# P100), B89734 (V2, priced like the V100 shapes), B92740 (E3).
PART_SHAPES: dict[str, tuple[Shape, ...]] = {
    "B98415": (Shape("BM.GPU.H100.8", "H100-SXM", 8, 80, 224, 2048, "nvswitch"),),
    "B110519": (Shape("BM.GPU.H200.8", "H200-SXM", 8, 141, 224, 3072, "nvswitch"),),
    "B110978": (Shape("BM.GPU.B200.8", "B200", 8, 180, 256, 4096, "nvswitch"),),
    "B112237": (Shape("BM.GPU.B300.8", "B300", 8, 262.5, 256, 4096, "nvswitch"),),
    "B110979": (Shape("BM.GPU.GB200.4", "GB200", 4, 192, 144, 960, "nvswitch"),),
    "B112140": (Shape("BM.GPU.GB300.4", "GB300", 4, 278, 144, 960, "nvswitch"),),
    "B109485": (Shape("BM.GPU.MI300X.8", "MI300X", 8, 192, 224, 2048, "infinity_fabric"),),
    "B111758": (Shape("BM.GPU.MI355X.8", "MI355X", 8, 288, 256, 3072, "infinity_fabric"),),
    "B95907": (Shape("BM.GPU.A100-v2.8", "A100-SXM4-80GB", 8, 80, 256, 2048, "nvswitch"),),
    "B93544": (Shape("BM.GPU4.8", "A100-SXM4-40GB", 8, 40, 128, 2048, "nvswitch"),),
    "B109479": (Shape("BM.GPU.L40S.4", "L40S", 4, 48, 224, 1024, "pcie"),),
    # the price list and shape name say "RTX PRO 6000" with no edition: the stand-in
    "B112613": (Shape("BM.GPU.RTXPRO.8", "RTX-PRO-6000-AnyEdition", 8, 96, 288, 3072, "pcie"),),
    "B95909": (
        Shape("VM.GPU.A10.1", "A10", 1, 24, 30, 240, None),
        Shape("VM.GPU.A10.2", "A10", 2, 24, 60, 480, "pcie"),
        Shape("BM.GPU.A10.4", "A10", 4, 24, 128, 1024, "pcie"),
    ),
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    # The list ignores limit/offset and returns every part in one answer.
    yield fetcher.get(URL, params=PARAMS)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    items = _json.page(body, "OCI price list", "items")
    # Single non-GPU parts may lack a metric; none having one means the field was renamed.
    if items and not any(isinstance(item, dict) and "metricName" in item for item in items):
        raise ParseError("OCI price list items have no `metricName`")
    yield from each_record("offers", items, _item)


def _item(item: dict[str, Any]) -> Iterator[ParseItem]:
    if item.get("metricName") != GPU_METRIC:
        return  # OCPU, memory, storage, per-node and per-day parts: not GPU-hour rentals
    part, name = item["partNumber"], item["displayName"]
    if _NOT_RENTAL.search(name) or _NOT_RENTAL.search(item.get("serviceCategory") or ""):
        return
    shapes = PART_SHAPES.get(part)
    if shapes is None:
        yield Rejected("offers", (f"unknown_gpu: {name!r}", f"part {part} has no reviewed shape"), item)
        return
    prices = _usd_pay_as_you_go(item)
    if len(prices) != 1 or prices[0] <= 0:
        # None, zero (a placeholder) or several (tiers): no single hourly rate to trust.
        yield Rejected("offers", (f"no_price: part {part} has USD pay-as-you-go prices {prices}",), item)
        return
    price = prices[0]
    for shape in shapes:
        yield Offer(
            offer_id=f"{shape.name}/on_demand",
            instance_type=shape.name,
            region="global",
            market="on_demand",
            gpu_name=name,
            gpu_model=shape.gpu_model,
            gpu_count=float(shape.gpu_count),
            gpu_memory_gb=float(shape.gpu_memory_gb),
            vcpus=float(shape.vcpus),
            ram_gb=float(shape.ram_gb),
            price=price,
            price_unit="gpu_hour",
            currency="USD",
            availability="unknown",
            interconnect=shape.interconnect,
        )


def _usd_pay_as_you_go(item: dict[str, Any]) -> list[float]:
    return sorted(
        {
            float(price["value"])
            for localization in item["currencyCodeLocalizations"]
            if localization["currencyCode"] == "USD"
            for price in localization["prices"]
            if price["model"] == PRICE_MODEL and price.get("value") is not None
        }
    )


SOURCE = Source(
    name="oci-pricelist",
    provider="oci",
    description="Oracle Cloud price list: GPU parts per GPU-hour joined to bare-metal and VM GPU shapes",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://www.oracle.com/cloud/price-list/",
    gpu_targets=frozenset(shape.gpu_model for shapes in PART_SHAPES.values() for shape in shapes),
)
