"""GCP Cloud Billing Catalog: persistent disk prices and internet egress tiers, the machine-readable terms.

The same Compute Engine SKU list as `gcp-billing` (`services/6F81-5844-456A/skus`, API key,
`nextPageToken` paging), read for two other kinds of SKU:

- zonal persistent disk capacity (resourceFamily `Storage`): "Storage PD Capacity" (pd-standard),
  "Balanced PD Capacity" (pd-balanced) and "SSD backed PD Capacity" (pd-ssd), optionally followed
  by " in <place>" for regions priced apart. Priced per GiB-month (`usageUnit` `GiBy.mo`), so
  the GB-month price is the GiB price over 1.073741824. "Regional ..." SKUs (replicated across
  two zones, twice the bytes) and Hyperdisk are not a job's plain working disk;
- premium-tier internet egress (resourceFamily `Network`, resourceGroup `PremiumInternetEgress`):
  "Network Internet Egress from <source> to <destination>" (newer catalogs write "Data Transfer
  Out" for "Egress"), one SKU per source and destination continent, tiers as `tieredRates`
  whose `startUsageAmount` is GiB of the month's traffic. Only traffic to the source's own
  continent is kept (Americas to Americas for us-central1): that is the schedule GCP's pricing
  page quotes first; China and Australia destinations cost more and are not read.

One row or schedule per region the SKU lists in `serviceRegions`; units are converted from GiB
to GB (10^9 bytes) and the GiB figure stays in `original_price` / `original_unit`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import ParseItem, Rejected, ScrapedEgressTier, ScrapedStorageTerm
from gpucat.scrapers import _json
from gpucat.scrapers.base import Source, each_record
from gpucat.scrapers.gcp_billing import HOST, fetch

GIB_GB = 1.073741824
DISKS = {"Storage PD Capacity": "pd-standard", "Balanced PD Capacity": "pd-balanced", "SSD backed PD Capacity": "pd-ssd"}
_DISK = re.compile(r"^(?P<name>Storage PD Capacity|Balanced PD Capacity|SSD backed PD Capacity)(?: in (?P<place>.+))?$")
_EGRESS = re.compile(r"^Network Internet (?:Egress|Data Transfer Out) from (?P<source>.+?) to (?P<destination>.+)$")
# A source continent's own destination: the schedule kept for each region it lists.
SAME_CONTINENT = {"Americas": "Americas", "EMEA": "EMEA", "APAC": "APAC", "Europe": "Europe", "Asia": "Asia"}


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    # A SKU that cannot be read is rejected under the first table: which one it priced is unknown.
    yield from each_record("scraped_storage_terms", _json.page(body, "GCP Billing Catalog page", "skus"), lambda sku: _terms(sku, url))


def _terms(sku: dict[str, Any], url: str) -> Iterator[ParseItem]:
    family, description = sku["category"]["resourceFamily"], sku["description"]
    if family == "Storage" and sku["category"]["usageType"] == "OnDemand" and _DISK.match(description):
        return _disk(sku, url)
    if family == "Network" and sku["category"]["resourceGroup"] == "PremiumInternetEgress" and _EGRESS.match(description):
        return _egress(sku, url)
    return iter(())


def _expression(sku: dict[str, Any]) -> dict[str, Any]:
    return sku["pricingInfo"][0]["pricingExpression"]


def _price(rate: dict[str, Any]) -> float:
    """`unitPrice` as units (a string) plus nanos; proto3 leaves out zero fields."""
    unit = rate["unitPrice"]
    return int(unit.get("units") or 0) + int(unit.get("nanos") or 0) / 1e9


def _raw(sku: dict[str, Any]) -> dict[str, Any]:
    return {"skuId": sku.get("skuId"), "description": sku.get("description"), "serviceRegions": sku.get("serviceRegions"), "pricingExpression": _expression(sku)}


def _disk(sku: dict[str, Any], url: str) -> Iterator[ParseItem]:
    expression = _expression(sku)
    rates = expression["tieredRates"]
    currencies = {r["unitPrice"]["currencyCode"] for r in rates}
    if expression["usageUnit"] != "GiBy.mo" or len(rates) != 1 or currencies != {"USD"}:
        reason = f"unexpected_price_dimension: {len(rates)} tiers in {sorted(currencies)} per {expression['usageUnit']} (read: one USD tier per GiBy.mo)"
        yield Rejected("scraped_storage_terms", (reason,), _raw(sku))
        return
    price = _price(rates[0])
    if price <= 0:
        yield Rejected("scraped_storage_terms", (f"no_price: {price} USD per GiBy.mo",), _raw(sku))
        return
    if not sku["serviceRegions"]:
        yield Rejected("scraped_storage_terms", ("no_region: serviceRegions is empty",), _raw(sku))
        return
    product = DISKS[_DISK.match(sku["description"])["name"]]  # type: ignore[index]
    quote = f"SKU {sku['skuId']}, {sku['description']}: {price:g} USD per {expression['usageUnitDescription']} ({expression['usageUnit']})"
    for region in sku["serviceRegions"]:
        yield ScrapedStorageTerm(
            kind="block",
            product=product,
            region=region,
            usd_per_gb_month=round(price / GIB_GB, 9),
            original_currency="USD",
            original_price=price,
            original_unit="GiB-month",
            evidence=f'usd_per_gb_month,original_price: "{quote}" <{url}>',
            notes="zonal persistent disk, priced per GiB-month provisioned",
        )


def _egress(sku: dict[str, Any], url: str) -> Iterator[ParseItem]:
    match = _EGRESS.match(sku["description"])
    assert match is not None
    if SAME_CONTINENT.get(match["source"]) != match["destination"]:
        return  # another continent's traffic (China, Australia, ...): not the schedule quoted first
    expression = _expression(sku)
    rates = sorted(expression["tieredRates"], key=lambda r: float(r["startUsageAmount"]))
    currencies = {r["unitPrice"]["currencyCode"] for r in rates}
    if expression["usageUnit"] != "GiBy" or currencies != {"USD"} or not rates or float(rates[0]["startUsageAmount"]) != 0:
        reason = f"unexpected_price_dimension: {sorted(currencies)} per {expression['usageUnit']}, first tier at {rates[0]['startUsageAmount'] if rates else None} (read: USD per GiBy from 0)"
        yield Rejected("scraped_egress_terms", (reason,), _raw(sku))
        return
    starts = [float(r["startUsageAmount"]) for r in rates]
    if len(set(starts)) != len(starts):
        yield Rejected("scraped_egress_terms", (f"ambiguous_schedule: tiers start twice at {starts}",), _raw(sku))
        return
    for region in sku["serviceRegions"]:
        for number, (rate, following) in enumerate(zip(rates, [*rates[1:], None], strict=True), start=1):
            start, price = float(rate["startUsageAmount"]), _price(rate)
            end = None if following is None else float(following["startUsageAmount"])
            span = f"from {start:g} GiB" + ("" if end is None else f" to {end:g} GiB")
            quote = f"SKU {sku['skuId']}, {sku['description']}, tier {span}: {price:g} USD per {expression['usageUnitDescription']}"
            yield ScrapedEgressTier(
                scope="internet",
                region=region,
                tier=number,
                from_gb=round(start * GIB_GB, 6),
                to_gb=None if end is None else round(end * GIB_GB, 6),
                usd_per_gb=round(price / GIB_GB, 9),
                original_price=price,
                original_unit="GiB",
                # free_allowance_gb_month: the free tier is account-wide: not in the SKU
                evidence=f'from_gb,to_gb,usd_per_gb,original_price: "{quote}" <{url}>',
                notes=f"premium tier, {match['source']} to {match['destination']}; GiB tiers converted to GB",
            )


SOURCE = Source(
    name="gcp-terms",
    provider="gcp",
    description="GCP Cloud Billing Catalog: persistent disk GB-month prices and premium internet egress tiers (terms)",
    tables=("scraped_storage_terms", "scraped_egress_terms"),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="GCP_API_KEY",
    api_key_required=True,
    docs_url="https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list",
)
