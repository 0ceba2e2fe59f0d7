"""Cudo Compute machine types, read for the disk price: the machine-readable storage terms.

The same public `GET /v1/vms/machine-types` answer as `cudo-machine-types`. Every machine type
record carries `minStorageGibPriceHr`, the price of one GiB of VM disk per hour in its data
centre, as a decimal string in `{"value": ...}`. A data centre's disk price is one figure: the
records of one data centre that disagree are rejected together (which one holds is not ours to
pick). The trap is the unit: per GiB and per hour, so the GB-month price is the hourly price
x 730 hours / 1.073741824 GB per GiB.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import ParseItem, Rejected, ScrapedStorageTerm
from gpucat.scrapers import _json
from gpucat.scrapers.base import Source
from gpucat.scrapers.cudo_machine_types import HOST, fetch

HOURS_PER_MONTH = 730
GIB_GB = 1.073741824
FIELD = "minStorageGibPriceHr"


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    by_centre: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in _json.page(body, "Cudo answer", "machineTypes"):  # one price per data centre: a bad record fails the page
        by_centre[record["dataCenterId"]].append({"machineType": record["machineType"], FIELD: record[FIELD]["value"]})
    for centre, records in sorted(by_centre.items()):
        yield from _centre(centre, records, url)


def _centre(centre: str, records: list[dict[str, Any]], url: str) -> Iterator[ParseItem]:
    values = sorted({r[FIELD] for r in records})
    try:
        prices = {float(v) for v in values}
    except ValueError as exc:
        yield Rejected("scraped_storage_terms", (f"unparseable_number: {exc}",), {"dataCenterId": centre, "records": records})
        return
    if len(prices) != 1:
        yield Rejected("scraped_storage_terms", (f"ambiguous_price: {FIELD} {values} in one data centre",), {"dataCenterId": centre, "records": records})
        return
    price = prices.pop()
    if price <= 0:
        yield Rejected("scraped_storage_terms", (f"no_price: {FIELD} {values[0]}",), {"dataCenterId": centre, "records": records})
        return
    types = ", ".join(sorted(r["machineType"] for r in records))
    quote = f"dataCenterId {centre}, {FIELD} value {values[0]} (machine types {types})"
    yield ScrapedStorageTerm(
        kind="block",
        product="Disk",
        region=centre,
        usd_per_gb_month=round(price * HOURS_PER_MONTH / GIB_GB, 9),
        original_currency="USD",
        original_price=price,
        original_unit="GiB-hour",
        evidence=f'usd_per_gb_month,original_price: "{quote}" <{url}>',
        notes="VM disk priced per GiB-hour; GB-month = x 730 h / 1.073741824",
    )


SOURCE = Source(
    name="cudo-terms",
    provider="cudo",
    description="Cudo Compute machine types: VM disk price per GiB-hour by data centre (terms)",
    tables=("scraped_storage_terms",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
)
