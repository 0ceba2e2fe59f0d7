"""OVHcloud Public Cloud order catalog, read for block volumes: the machine-readable storage terms.

The same public catalog as `ovh-catalog` (`/1.0/order/catalog/public/cloud?ovhSubsidiary=FR`).
Volumes are the addons the `project` plan lists in its `volume` addon family
(`volume.classic.consumption`, `volume.high-speed.consumption`, ...), each with an hourly
consumption pricing. Traps: prices are integers in 1e-8 of the locale's currency (EUR for FR),
net of tax; the quantity is one GiB for one hour; the currency stays as quoted here and the
refresh's normalization converts it with the latest exchange rate (scrapers/normalize.py).
The catalog states no egress price for instances (OVH does not bill instance bandwidth), so no
egress rows come from it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import ParseItem, Rejected, ScrapedStorageTerm
from gpucat.scrapers.base import Source
from gpucat.scrapers.ovh_catalog import HOST, PRICE_SCALE, fetch, read_catalog


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    catalog, currency = read_catalog(body)
    project = next((p for p in catalog["plans"] if isinstance(p, dict) and p.get("planCode") == "project"), None)
    family = next((f for f in (project or {}).get("addonFamilies") or [] if f.get("name") == "volume"), None)
    if family is None or not family.get("addons"):
        raise ParseError("OVH catalog's project plan has no `volume` addon family")
    codes = set(family["addons"])
    for addon in catalog["addons"]:
        if isinstance(addon, dict) and addon.get("planCode") in codes:
            yield _volume(addon, currency, url)


def _volume(addon: dict[str, Any], currency: str, url: str) -> ParseItem:
    code = addon["planCode"]
    hourly = [p for p in addon.get("pricings") or [] if p.get("intervalUnit") == "hour" and "consumption" in (p.get("capacities") or [])]
    row = {"planCode": code, "pricings": addon.get("pricings")}
    if len(hourly) != 1 or hourly[0].get("interval", 1) != 1:
        return Rejected("scraped_storage_terms", (f"unexpected_price_dimension: {len(hourly)} hourly consumption pricings (read: one, per 1 hour)",), row)
    raw = hourly[0].get("price")
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ParseError(f"OVH volume {code!r}: price is not an integer count of 1e-8 {currency}: {raw!r}")
    if raw <= 0:
        return Rejected("scraped_storage_terms", (f"no_price: {raw!r}",), row)
    price = raw / PRICE_SCALE
    name = (addon.get("blobs") or {}).get("commercial", {}).get("name") or addon.get("invoiceName") or code
    quote = f"planCode {code}, {hourly[0].get('description', '')}: price {raw} (1e-8 {currency}, tax {hourly[0].get('tax')}) per {hourly[0]['interval']} {hourly[0]['intervalUnit']}"
    return ScrapedStorageTerm(
        kind="block",
        product=f"Block Storage {name.removeprefix('volume.')}",
        region="global",
        # usd_per_gb_month: set by normalization from the exchange rate
        original_currency=currency,
        original_price=price,
        original_unit="GiB-hour",
        evidence=f'original_price: "{quote}" <{url}>',
        notes=f"{currency} net of tax, per GiB-hour, one price for the subsidiary's regions",
    )


SOURCE = Source(
    name="ovh-terms",
    provider="ovh",
    description="OVHcloud Public Cloud catalog: block volume prices per GiB-hour, EUR (terms)",
    tables=("scraped_storage_terms",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://eu.api.ovh.com/console/?section=%2Forder&branch=v1#get-/order/catalog/public/cloud",
)
