"""Azure Retail Prices API: pay-as-you-go and spot prices of GPU VM sizes in every region.

One server-side `$filter` keeps the walk to GPU VM families; the client then drops what is out
of scope (Windows, Low Priority, Reservation and DevTest prices, non-hourly units, sovereign
clouds) and rejects placeholder prices (an H100 size at $0.01 in one region) by comparing each
price with the median of the same size in the other regions. GPU model and count come from
the ARM SKU name, decoded by its grammar in `scrapers._azure`; a VM size of a non-GPU family is
skipped and counted, an N-series size the grammar cannot place is rejected as `unknown_gpu` (or
`unknown_gpu_count` when the GPU is known but not how many a size holds).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import IO, Any
from urllib.parse import quote

from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import _azure, _json, _paging
from gpucat.scrapers.base import Fetcher, Source, each_record

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


# Each page names the next one's full URL (query included) in NextPageLink, null on the last.
PAGES = _paging.NextUrl(("NextPageLink",))


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield from _paging.paginate(fetcher, URL, PAGES, what="Azure retail prices", max_pages=MAX_PAGES)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    not_gpu: list[str] = []
    for offer in each_record("offers", _json.page(body, "Azure retail page", "Items"), lambda item: [_offer(item)]):
        if isinstance(offer, str):
            not_gpu.append(offer)
        elif offer is not None:
            yield offer
    if not_gpu:
        yield Skipped("not_gpu: not a GPU VM size", len(not_gpu), tuple(sorted(set(not_gpu)))[:5])


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


def sku_of(item: dict[str, Any]) -> str:
    """The ARM SKU name; an item without a usable one is named from its skuName (`NC24ads A100 v4 Spot`)."""
    arm = (item.get("armSkuName") or "").strip()
    return arm if arm.lower().startswith("standard_") else _azure.name_from_sku_name(item["skuName"])


def _offer(item: dict[str, Any]) -> ParseItem | str | None:
    """The item's offer or rejection; its SKU name when it is not a GPU VM; None when out of scope."""
    if not _in_scope(item):
        return None
    sku, region = sku_of(item), item["armRegionName"]
    market = "spot" if "Spot" in item["meterName"] or "Spot" in item["skuName"] else "on_demand"
    decoded = _azure.decode(sku)
    if decoded.kind == "not_gpu":
        return sku
    if decoded.kind != "gpu":
        raw = {k: item.get(k) for k in ("armSkuName", "armRegionName", "skuName", "meterName", "productName", "retailPrice", "type")}
        return Rejected("offers", (f"{decoded.kind}: {sku!r}", str(decoded.why)), {**raw, "market": market})
    series, count = decoded.series, decoded.gpu_count
    assert series is not None and count is not None and decoded.gpu_model is not None
    return Offer(
        offer_id=f"{sku}/{region}/{market}",
        instance_type=sku,
        region=region,
        market=market,
        gpu_name=sku,
        gpu_model=decoded.gpu_model,
        gpu_count=count,
        gpu_memory_gb=_slice_memory_gb(decoded.gpu_model, count) if count < 1 else None,
        vcpus=float(decoded.vcpus) if decoded.vcpus else None,
        price=float(item["retailPrice"]),
        price_unit="instance_hour",
        currency=item["currencyCode"],
        availability="unknown",
        interconnect=series.interconnect if count > 1 else None,
        # r: RDMA. A series page that names the fabric says how fast; NCv3's NC24rs does not.
        fabric=series.fabric or ("infiniband" if "r" in decoded.features else None),
        fabric_gbps=float(series.fabric_gbps) if series.fabric_gbps else None,
    )


def _slice_memory_gb(gpu_model: str, fraction: float) -> float:
    """A fractional vGPU slice exposes that fraction of the card's memory (NV6ads A10: 4 GB)."""
    return round(gpu_models()[gpu_model].memory_gb * fraction, 3)


def postprocess(items: list[ParseItem]) -> Iterable[ParseItem]:
    """Reject placeholder prices: far below the same size's median in other regions."""
    prices: dict[tuple[str, str], list[float]] = defaultdict(list)
    for item in items:
        if isinstance(item, Offer):
            prices[(item.instance_type, item.market)].append(item.price)
    for item in items:
        if not isinstance(item, Offer):
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
    gpu_targets=_azure.GPU_TARGETS,
    docs_url="https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices",
)
