"""Verda (formerly DataCrunch) volume types: block volume prices, the machine-readable storage terms.

`GET /v1/volume-types?currency=usd` lists each volume type (`NVMe`, `HDD`, `NVMe_Shared`, ...)
with `price.price_per_month_per_gb`, the same price per second as `price.cps_per_gb`, and the
`currency` it is quoted in (Verda also quotes EUR, hence the parameter). Shared-filesystem types
(`is_shared_fs`) are network volumes; the others block volumes. Traps: a price in a currency
other than the one asked for is rejected, never read as USD; the monthly and per-second prices
must agree (per second x 730 x 3600), else the row is rejected as ambiguous; a zero price is a
placeholder.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Page, ParseItem, Rejected, ScrapedStorageTerm
from gpucat.scrapers import _json
from gpucat.scrapers.base import Fetcher, Source, each_record
from gpucat.scrapers.verda_instance_types import HOST

URL = f"https://{HOST}/v1/volume-types"
SECONDS_PER_MONTH = 730 * 3600
AGREEMENT = 0.01  # relative gap allowed between the monthly and the per-second price


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL, params={"currency": "usd"})


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.page(body, "Verda volume-types answer")
    if not payload:
        raise ParseError("Verda volume-types answer is an empty list")
    yield from each_record("scraped_storage_terms", payload, lambda record: [_volume_type(record, url)])


def _volume_type(record: dict[str, Any], url: str) -> ParseItem:
    price_info = record["price"]
    monthly, per_second, currency = price_info["price_per_month_per_gb"], price_info.get("cps_per_gb"), price_info["currency"]
    raw = {"type": record["type"], "price": price_info, "is_shared_fs": record.get("is_shared_fs")}
    if str(currency).lower() != "usd":
        return Rejected("scraped_storage_terms", (f"unexpected_currency: {currency!r} (asked for usd)",), raw)
    if isinstance(monthly, bool) or not isinstance(monthly, int | float) or monthly <= 0:
        return Rejected("scraped_storage_terms", (f"no_price: price_per_month_per_gb {monthly!r}",), raw)
    if isinstance(per_second, int | float) and abs(per_second * SECONDS_PER_MONTH - monthly) > AGREEMENT * monthly:
        reason = f"ambiguous_price: price_per_month_per_gb {monthly} but cps_per_gb {per_second} is {per_second * SECONDS_PER_MONTH:.4f} a month"
        return Rejected("scraped_storage_terms", (reason,), raw)
    quote = f"type {record['type']}: price_per_month_per_gb {monthly}, currency {currency}"
    return ScrapedStorageTerm(
        kind="network_volume" if record.get("is_shared_fs") else "block",
        product=f"{record['type']} volume",
        region="global",
        usd_per_gb_month=float(monthly),
        original_currency="USD",
        original_price=float(monthly),
        original_unit="GB-month",
        evidence=f'usd_per_gb_month,original_price: "{quote}" <{url}>',
        notes="one price for every location (the list names none)",
    )


SOURCE = Source(
    name="verda-terms",
    provider="verda",
    description="Verda (DataCrunch) volume types: block and shared volume prices per GB-month (terms)",
    tables=("scraped_storage_terms",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://api.datacrunch.io/v1/docs",
)
