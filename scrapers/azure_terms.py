"""Azure Retail Prices API: managed disk prices and internet egress tiers, the machine-readable terms.

Two filtered walks of the same endpoint and paging as `azure-retail` (`NextPageLink`), for the
region the provider-wide terms quote (`eastus`):

- managed disks (serviceName `Storage`, productName `Premium SSD Managed Disks` / `Standard SSD
  Managed Disks`): one meter per disk size, `P10 LRS Disk`, priced per disk and month
  (`1/Month`). The GB-month price is that price over the size's capacity, from Microsoft's size
  tables (`DISK_SIZES_GIB`). Only LRS (a managed disk's default redundancy) capacity meters are
  kept: not `... Disk Mount` (the shared-disk attach fee), `... Disk Operations` (per 10K
  transactions), ZRS or reservations;
- bandwidth (serviceName `Bandwidth`): internet egress routed over Microsoft's network, productName
  `Rtn Preference: MGN` (the default routing; "Routing Preference: Internet" is an opt-in),
  meterName `Standard Data Transfer Out`, one item per tier whose `tierMinimumUnits` (GB a month)
  is where the tier starts. Tiers can sit on different pages, so the batch pass orders them.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import IO, Any
from urllib.parse import quote

from gpucat.schemas.records import Page, ParseItem, Rejected, ScrapedEgressTier, ScrapedStorageTerm
from gpucat.scrapers import _json, _paging
from gpucat.scrapers.azure_retail import API_VERSION, HOST, MAX_PAGES, PAGES
from gpucat.scrapers.base import Fetcher, Source, each_record

REGIONS = ("eastus",)  # the region Azure's pricing pages quote first; see terms_reference_regions
DISK_PRODUCTS = ("Premium SSD Managed Disks", "Standard SSD Managed Disks")
EGRESS_PRODUCT, EGRESS_METER = "Rtn Preference: MGN", "Standard Data Transfer Out"
GIB_GB = 1.073741824

# Disk size in GiB of each managed disk size, as Microsoft's size tables give them:
# MicrosoftDocs/azure-docs includes/disk-storage-premium-ssd-sizes.md (P1-P80) and
# includes/disk-storage-standard-ssd-sizes.md (E1-E80): "| Disk size in GiB | 4 | 8 | 16 | 32 |
# 64 | 128 | 256 | 512 | 1,024 | 2,048 | 4,096 | 8,192 | 16,384 | 32,767 |".
_SIZES = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32767)
_TIERS = ("1", "2", "3", "4", "6", "10", "15", "20", "30", "40", "50", "60", "70", "80")
DISK_SIZES_GIB = {f"{letter}{tier}": size for letter in "PE" for tier, size in zip(_TIERS, _SIZES, strict=True)}
SIZE_TABLES = {
    "P": "https://github.com/MicrosoftDocs/azure-docs/blob/main/includes/disk-storage-premium-ssd-sizes.md",
    "E": "https://github.com/MicrosoftDocs/azure-docs/blob/main/includes/disk-storage-standard-ssd-sizes.md",
}
_SIZE_TABLE_NAMES = {"P": "Premium SSD sizes", "E": "Standard SSD sizes"}

# Throughput per disk in MB/s, from the same size tables (the 2023-03-16 versions): Premium SSDs'
# "Base provisioned Throughput per disk" (P1-P4 25 MB/s ... P80 900 MB/s) and Standard SSDs'
# "Base throughput per disk", a ceiling ("Up to 60 MB/s" E1-E50, 400/600/750 MB/s E60-E80).
# Not the burst figures, nor the "Expanded" ones (performance plus, preview).
_THROUGHPUT = {
    "P": (25, 25, 25, 25, 50, 100, 125, 150, 200, 250, 250, 500, 750, 900),
    "E": (60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 400, 600, 750),
}
DISK_THROUGHPUT_MB_S = {f"{letter}{tier}": mbs for letter, row in _THROUGHPUT.items() for tier, mbs in zip(_TIERS, row, strict=True)}
THROUGHPUT_TABLES = {
    "P": "https://github.com/MicrosoftDocs/azure-docs/blob/1d25717f1a22291b7eb95f47321b70e81cec4841/includes/disk-storage-premium-ssd-sizes.md",
    "E": "https://github.com/MicrosoftDocs/azure-docs/blob/90c7556211e97abf9821c34e9fb42f4d070b63ea/includes/disk-storage-standard-ssd-sizes.md",
}
_THROUGHPUT_ROWS = {"P": "Base provisioned Throughput per disk {mbs} MB/s", "E": "Base throughput per disk Up to {mbs} MB/s"}


def _url(filter_: str) -> str:
    return f"https://{HOST}/api/retail/prices?api-version={API_VERSION}&$filter={quote(filter_, safe='()')}"


def walk_urls(region: str) -> tuple[str, str]:
    products = " or ".join(f"productName eq '{p}'" for p in DISK_PRODUCTS)
    disks = f"serviceName eq 'Storage' and armRegionName eq '{region}' and ({products}) and priceType eq 'Consumption'"
    bandwidth = f"serviceName eq 'Bandwidth' and armRegionName eq '{region}' and priceType eq 'Consumption'"
    return _url(disks), _url(bandwidth)


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    for region in REGIONS:
        for first in walk_urls(region):
            yield from _paging.paginate(fetcher, first, PAGES, what=f"Azure retail prices ({region})", max_pages=MAX_PAGES)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    # An item that cannot be read is rejected under the first table: which one it priced is unknown.
    yield from each_record("scraped_storage_terms", _json.page(body, "Azure retail page", "Items"), lambda item: _terms(item, url))


def _terms(item: dict[str, Any], url: str) -> list[ParseItem]:
    if item["type"] != "Consumption" or item["currencyCode"] != "USD":
        return []
    if item["serviceName"] == "Storage" and item["productName"] in DISK_PRODUCTS:
        record = _disk(item, url)
    elif item["serviceName"] == "Bandwidth" and item["productName"] == EGRESS_PRODUCT and item["meterName"] == EGRESS_METER:
        record = _egress_tier(item, url)
    else:
        return []
    return [] if record is None else [record]


def _raw(item: dict[str, Any]) -> dict[str, Any]:
    keys = ("meterId", "meterName", "productName", "skuName", "armRegionName", "retailPrice", "unitOfMeasure", "tierMinimumUnits")
    return {k: item.get(k) for k in keys}


def _disk(item: dict[str, Any], url: str) -> ParseItem | None:
    size_name, _, redundancy = str(item["skuName"]).partition(" ")
    if redundancy != "LRS" or item["meterName"] != f"{item['skuName']} Disk":
        return None  # ZRS, the Disk Mount and Disk Operations meters
    if item["unitOfMeasure"] != "1/Month":
        return Rejected("scraped_storage_terms", (f"unexpected_unit: {item['unitOfMeasure']!r} (read: 1/Month, a disk's month)",), _raw(item))
    size_gib = DISK_SIZES_GIB.get(size_name)
    if size_gib is None or size_name[0] != ("P" if item["productName"].startswith("Premium") else "E"):
        return Rejected("scraped_storage_terms", (f"unknown_disk_size: {size_name!r} is not in the size tables", "add it to DISK_SIZES_GIB with its source"), _raw(item))
    price = item["retailPrice"]
    if isinstance(price, bool) or not isinstance(price, int | float):
        return Rejected("scraped_storage_terms", (f"unparseable_number: retailPrice {price!r}",), _raw(item))
    table = size_name[0]
    quote_price = f"meterId {item['meterId']}, {item['meterName']} ({item['productName']}): {price} USD per {item['unitOfMeasure']}"
    quote_size = f"{_SIZE_TABLE_NAMES[table]} {size_name}, Disk size in GiB {size_gib:,}"
    mbs = DISK_THROUGHPUT_MB_S[size_name]
    quote_throughput = f"{_SIZE_TABLE_NAMES[table]} {size_name}, " + _THROUGHPUT_ROWS[table].format(mbs=mbs)
    usd_per_gb_month = round(price / (size_gib * GIB_GB), 9)
    return ScrapedStorageTerm(
        kind="block",
        product=f"{item['productName'].removesuffix(' Managed Disks')} {item['skuName']}",
        region=item["armRegionName"],
        usd_per_gb_month=usd_per_gb_month,
        original_currency="USD",
        original_price=round(price / size_gib, 9),
        original_unit="GiB-month",
        max_size_gb=round(size_gib * GIB_GB, 3),
        read_throughput_mb_s=float(mbs),
        evidence=(
            f'usd_per_gb_month,original_price: "{quote_price}" <{url}>'
            f' || usd_per_gb_month,original_price,max_size_gb: "{quote_size}" <{SIZE_TABLES[table]}>'
            f' || read_throughput_mb_s: "{quote_throughput}" <{THROUGHPUT_TABLES[table]}>'
        ),
        notes=(
            f"priced per disk: {price} USD a month for {size_gib:,} GiB; max_size_gb is this size's capacity;"
            " read_throughput_mb_s is the size's base throughput" + (" (a ceiling: 'Up to')" if table == "E" else "")
        ),
    )


def _egress_tier(item: dict[str, Any], url: str) -> ParseItem:
    """A tier as the item states it; `tier` and `to_gb` are set by the batch pass, which sees them all."""
    price, start = item["retailPrice"], item["tierMinimumUnits"]
    if item["unitOfMeasure"] != "1 GB":
        return Rejected("scraped_egress_terms", (f"unexpected_unit: {item['unitOfMeasure']!r} (read: 1 GB)",), _raw(item))
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in (price, start)):
        return Rejected("scraped_egress_terms", (f"unparseable_number: retailPrice {price!r}, tierMinimumUnits {start!r}",), _raw(item))
    quote_tier = f"meterId {item['meterId']}, {item['productName']} {item['meterName']}, tierMinimumUnits {start}: {price} USD per {item['unitOfMeasure']}"
    return ScrapedEgressTier(
        scope="internet",
        region=item["armRegionName"],
        tier=0,
        from_gb=float(start),
        usd_per_gb=float(price),
        original_price=float(price),
        original_unit="GB",
        evidence=f'from_gb,usd_per_gb,original_price: "{quote_tier}" <{url}>',
        notes=item["meterId"],  # for the batch pass (one meter per region's ladder), which clears it
    )


def postprocess(items: list[ParseItem]) -> Iterable[ParseItem]:
    """Number each region's egress tiers by where they start; a tier ends where the next starts."""
    schedules: dict[str, list[ScrapedEgressTier]] = defaultdict(list)
    for item in items:
        if isinstance(item, ScrapedEgressTier):
            schedules[item.region].append(item)
        else:
            yield item
    for region, tiers in sorted(schedules.items()):
        meters = sorted({t.notes or "" for t in tiers})
        starts = [t.from_gb for t in tiers]
        if len(meters) > 1 or len(set(starts)) != len(starts):
            reason = f"ambiguous_schedule: {len(meters)} meters, {len(starts)} tiers for {region}"
            yield from (Rejected("scraped_egress_terms", (reason,), t.as_row()) for t in tiers)
            continue
        ordered = sorted(tiers, key=lambda t: t.from_gb)
        for number, (tier, following) in enumerate(zip(ordered, [*ordered[1:], None], strict=True), start=1):
            end = following.from_gb if following else None
            evidence = tier.evidence if end is None else f'{tier.evidence} || to_gb: "next tier: tierMinimumUnits {following.from_gb:g}" <{following.source_url}>'  # type: ignore[union-attr]
            yield dataclasses.replace(tier, tier=number, to_gb=end, evidence=evidence, notes=None)


SOURCE = Source(
    name="azure-terms",
    provider="azure",
    description="Azure Retail Prices API: managed disk GB-month prices and internet egress tiers (terms)",
    tables=("scraped_storage_terms", "scraped_egress_terms"),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    postprocess=postprocess,
    docs_url="https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices",
)
