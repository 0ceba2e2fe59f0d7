"""Azure Retail Prices API: pay-as-you-go and spot prices of GPU VM sizes in every region.

One server-side `$filter` keeps the walk to GPU VM families; the client then drops what is out
of scope (Windows, Low Priority, Reservation and DevTest prices, non-hourly units, sovereign
clouds) and rejects placeholder prices (an H100 size at $0.01 in one region) by comparing each
price with the median of the same size in the other regions. GPU model and count come from
the ARM SKU name through the reviewed table below; a size it does not know is `unknown_gpu`.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any
from urllib.parse import quote

from schemas.errors import ParseError
from schemas.records import Offer, Page, ParseItem, Rejected
from scrapers.base import Fetcher, Source

from schemas.reference import gpu_models

HOST = "prices.azure.com"
API_VERSION = "2023-01-01-preview"
FILTER = (
    "serviceName eq 'Virtual Machines' and (contains(armSkuName, 'Standard_NC') or "
    "contains(armSkuName, 'Standard_ND') or contains(armSkuName, 'Standard_NV') or "
    "contains(armSkuName, 'Standard_NG'))"
)
URL = f"https://{HOST}/api/retail/prices?api-version={API_VERSION}&$filter={quote(FILTER, safe='()')}"
MAX_PAGES = 500
# A price under this fraction of the same size's median across regions is a placeholder.
PLACEHOLDER_RATIO = 0.2
_SOVEREIGN = ("usgov", "usdod", "china", "germany")


@dataclass(frozen=True)
class SkuFamily:
    pattern: re.Pattern[str]
    gpu_model: str
    gpus_by_size: dict[str, float]  # vCPU size token -> GPUs (fractions for vGPU slices)
    interconnect: str | None = None
    fabric: str | None = None
    fabric_gbps: float | None = None


def _family(regex: str, gpu: str, sizes: dict[str, float], **kw: Any) -> SkuFamily:
    return SkuFamily(re.compile(regex), gpu, sizes, **kw)


# Reviewed against the Azure VM size pages (learn.microsoft.com/azure/virtual-machines/sizes).
SKU_FAMILIES: tuple[SkuFamily, ...] = (
    _family(r"^Standard_ND(\d+)isr_H100_v5$", "H100-SXM", {"96": 8}, interconnect="nvswitch", fabric="infiniband", fabric_gbps=3200),
    _family(r"^Standard_ND(\d+)isr_H200_v5$", "H200-SXM", {"96": 8}, interconnect="nvswitch", fabric="infiniband", fabric_gbps=3200),
    _family(r"^Standard_ND(\d+)isr_MI300X_v5$", "MI300X", {"96": 8}, interconnect="infinity_fabric", fabric="infiniband", fabric_gbps=3200),
    _family(r"^Standard_ND(\d+)isr_NDR_GB200_v6$", "GB200", {"128": 4}, interconnect="nvswitch", fabric="infiniband", fabric_gbps=1600),
    _family(r"^Standard_ND(\d+)amsr_A100_v4$", "A100-SXM4-80GB", {"96": 8}, interconnect="nvswitch", fabric="infiniband", fabric_gbps=1600),
    _family(r"^Standard_ND(\d+)asr_v4$", "A100-SXM4-40GB", {"96": 8}, interconnect="nvswitch", fabric="infiniband", fabric_gbps=1600),
    _family(r"^Standard_ND(\d+)rs_v2$", "V100-SXM2-32GB", {"40": 8}, interconnect="nvlink", fabric="infiniband", fabric_gbps=100),
    _family(r"^Standard_NC(\d+)ads_A100_v4$", "A100-PCIe-80GB", {"24": 1, "48": 2, "96": 4}, interconnect="pcie"),
    _family(r"^Standard_NCC?(\d+)adi?s_H100_v5$", "H100-NVL", {"40": 1, "80": 2}, interconnect="nvlink_bridge"),
    _family(r"^Standard_NC(\d+)as_T4_v3$", "T4", {"4": 1, "8": 1, "16": 1, "64": 4}, interconnect="pcie"),
    _family(r"^Standard_NC(\d+)s_v3$", "V100-PCIe-16GB", {"6": 1, "12": 2, "24": 4}, interconnect="pcie"),
    _family(r"^Standard_NC(\d+)rs_v3$", "V100-PCIe-16GB", {"24": 4}, interconnect="pcie", fabric="infiniband"),
    _family(r"^Standard_NV(\d+)ad(?:m)?s_A10_v5$", "A10", {"6": 1 / 6, "12": 1 / 3, "18": 1 / 2, "36": 1, "72": 2}, interconnect="pcie"),
)
_SIZE_TOKEN = re.compile(r"^Standard_N[CDVG]C?(\d+)")


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    url: str | None = URL
    seen: set[str] = set()
    while url:
        if url in seen or len(seen) >= MAX_PAGES:
            raise ParseError(f"Azure pagination does not end (page {len(seen) + 1}: {url})")
        seen.add(url)
        page = fetcher.get(url)
        yield page
        url = next_page_link(page.path.read_bytes())


def next_page_link(body: bytes) -> str | None:
    try:
        link = json.loads(body).get("NextPageLink")
    except (ValueError, AttributeError) as exc:
        raise ParseError(f"Azure page is not a JSON object: {exc}") from None
    return link or None


def gpu_for_sku(arm_sku: str) -> tuple[SkuFamily, float] | None:
    for family in SKU_FAMILIES:
        match = family.pattern.match(arm_sku)
        if match and match.group(1) in family.gpus_by_size:
            return family, family.gpus_by_size[match.group(1)]
    return None


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    try:
        envelope = json.loads(body.read())
        items = envelope["Items"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ParseError(f"Azure retail page lacks Items: {exc!r}") from None
    if not isinstance(items, list):
        raise ParseError("Azure retail page: Items is not a list")
    for item in items:
        try:
            offer = _offer(item, url, fetched_at)
        except (KeyError, TypeError) as exc:
            raise ParseError(f"Azure retail item lacks field {exc}") from None
        if offer is not None:
            yield offer


def _in_scope(item: dict[str, Any]) -> bool:
    return (
        item["type"] == "Consumption"
        and item["serviceName"] == "Virtual Machines"
        and item["unitOfMeasure"] == "1 Hour"
        and "Windows" not in item["productName"]
        and "Low Priority" not in item["meterName"]
        and "Low Priority" not in item["skuName"]
        and not item["armRegionName"].startswith(_SOVEREIGN)
    )


def _offer(item: dict[str, Any], url: str, fetched_at: datetime) -> ParseItem | None:
    if not _in_scope(item):
        return None
    sku, region = item["armSkuName"], item["armRegionName"]
    market = "spot" if "Spot" in item["meterName"] or "Spot" in item["skuName"] else "on_demand"
    found = gpu_for_sku(sku)
    family, gpu_count = found if found else (None, None)
    size = _SIZE_TOKEN.match(sku)
    return Offer(
        provider="azure",
        offer_id=f"{sku}/{region}/{market}",
        source=SOURCE.name,
        instance_type=sku,
        region=region,
        market=market,
        tier=None,
        gpu_name=sku,
        gpu_model=family.gpu_model if family else None,
        gpu_count=float(gpu_count) if gpu_count is not None else 0.0,
        gpu_memory_gb=_slice_memory_gb(family.gpu_model, gpu_count) if family and gpu_count and gpu_count < 1 else None,
        vcpus=float(size.group(1)) if size else None,
        ram_gb=None,
        price=float(item["retailPrice"]),
        price_unit="instance_hour",
        currency=item["currencyCode"],
        availability="unknown",
        available_count=None,
        interconnect=family.interconnect if family and gpu_count and gpu_count > 1 else None,
        fabric=family.fabric if family else None,
        fabric_gbps=float(family.fabric_gbps) if family and family.fabric_gbps else None,
        source_url=url,
        scraped_at=fetched_at,
    )


def _slice_memory_gb(gpu_model: str, fraction: float) -> float:
    """A fractional vGPU slice exposes that fraction of the card's memory (NV6ads A10: 4 GB)."""
    return round(gpu_models()[gpu_model].memory_gb * fraction, 3)


def postprocess(items: list[ParseItem]) -> Iterable[ParseItem]:
    """Reject placeholder prices: far below the same size's median in other regions."""
    prices: dict[tuple[str, str], list[float]] = defaultdict(list)
    for item in items:
        if not isinstance(item, Rejected):
            prices[(item.instance_type, item.market)].append(item.price)
    for item in items:
        if isinstance(item, Rejected):
            yield item
            continue
        peers = prices[(item.instance_type, item.market)]
        median = statistics.median(peers)
        if len(peers) >= 2 and item.price < PLACEHOLDER_RATIO * median:
            reason = f"placeholder_price: {item.price} is under {PLACEHOLDER_RATIO:.0%} of the median {median} in other regions"
            yield Rejected("offers", (reason,), item.as_row())
            continue
        yield item


SOURCE = Source(
    name="azure-retail",
    provider="azure",
    description="Azure Retail Prices API: pay-as-you-go and spot prices of GPU VM sizes",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    postprocess=postprocess,
    gpu_targets=frozenset(f.gpu_model for f in SKU_FAMILIES),
    docs_url="https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices",
)
