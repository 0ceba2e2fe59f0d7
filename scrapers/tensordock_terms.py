"""TensorDock v2 locations, read for the storage price: the machine-readable storage terms.

The same `GET /api/v2/locations` answer as `tensordock` (bearer key). Each GPU listed at a
location carries `pricing.per_gb_storage_hr`, the VM's disk in USD per GB-hour, and hosts of
different GPUs at one location may price it differently, so a row is one location and one GPU
host type. The trap is the unit: per GB and per hour (GB-month = x 730 h); a price of 0 or
none is a placeholder, rejected.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import IO, Any

from gpucat.schemas.records import ParseItem, Rejected, ScrapedStorageTerm
from gpucat.scrapers import _json
from gpucat.scrapers.base import Source, each_record
from gpucat.scrapers.tensordock import HOST, fetch

HOURS_PER_MONTH = 730


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    locations = _json.page(body, "TensorDock response", "data", "locations")
    yield from each_record("scraped_storage_terms", locations, lambda location: _location(location, url))


def _location(location: dict[str, Any], url: str) -> Iterator[ParseItem]:
    region = ", ".join(part for part in (location["city"], location["stateprovince"], location["country"]) if part)
    return (_storage(location["id"], region, gpu, url) for gpu in location["gpus"])


def _storage(location_id: str, region: str, gpu: dict[str, Any], url: str) -> ParseItem:
    price = gpu["pricing"].get("per_gb_storage_hr")
    raw = {"location": location_id, "v0Name": gpu["v0Name"], "pricing": gpu["pricing"]}
    if isinstance(price, bool) or not isinstance(price, int | float) or price <= 0:
        return Rejected("scraped_storage_terms", (f"no_price: per_gb_storage_hr {price!r}",), raw)
    text = format(Decimal(repr(float(price))), "f")
    quote = f"location {location_id} ({region}), {gpu['v0Name']}: pricing.per_gb_storage_hr {text}"
    return ScrapedStorageTerm(
        kind="volume",
        product=f"VM storage ({gpu['displayName']} hosts)",
        region=region,
        usd_per_gb_month=round(price * HOURS_PER_MONTH, 9),
        original_currency="USD",
        original_price=float(price),
        original_unit="GB-hour",
        max_size_gb=float(gpu["resources"]["max_storage_gb"]) if gpu.get("resources", {}).get("max_storage_gb") else None,
        evidence=f'usd_per_gb_month,original_price: "{quote}" <{url}>'
        + (f' || max_size_gb: "{gpu["v0Name"]} resources.max_storage_gb {gpu["resources"]["max_storage_gb"]}" <{url}>' if gpu.get("resources", {}).get("max_storage_gb") else ""),
        notes="the VM's disk, per GB-hour (x 730 h a month); max_size_gb is the most one VM on these hosts may take",
    )


SOURCE = Source(
    name="tensordock-terms",
    provider="tensordock",
    description="TensorDock v2 locations: VM storage price per GB-hour by location and GPU host (terms)",
    tables=("scraped_storage_terms",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="TENSORDOCK_API_KEY",
    api_key_required=True,
    docs_url="https://dashboard.tensordock.com/api/docs/fetch-hostnodes",
)
