"""Verda (formerly DataCrunch) instance types: on-demand and spot prices per instance.

`GET /v1/instance-types` answers a JSON array without a key. Prices are strings, per instance
and per hour, in the record's `currency` (`usd` or `eur`); `spot_price` sits beside
`price_per_hour`, and `"0.00"` means no spot market (or, for the on-demand price, a type that is
listed but not yet priced: rejected, never a free GPU). The list has no locations and stock by
location needs OAuth (`/v1/instance-availability`), so offers are `region="global"` with
availability `unknown`. `gpu_memory` is the instance total. CPU nodes are not GPU offers.

Per instance, not per GPU: Verda's CLI (verda-cloud/verda-cli `cmd/vm/README.md`, commit 7ae1786)
states "`price_per_hour` from the API is the TOTAL instance price, not per-GPU" (see the fixture NOTES).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import Offer, ParseItem, Rejected
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import mapped
from gpucat.scrapers.base import Fetcher, Page, Source, each_record

HOST = "api.datacrunch.io"
URL = f"https://{HOST}/v1/instance-types"

# `gpu.description` without its "<n>x " prefix -> canonical model. Reviewed 2026-12 against the
# descriptions in gpuhunt providers/verda.py GPU_MAP and its test records. Left to the catalog
# rules: "Tesla V100 16GB" (SXM2 or PCIe not stated: the stand-in V100-16GB-AnyForm) and "AMD
# 7900XTX" (a consumer card gpucat has no row for: rejected).
GPU_DESCRIPTIONS: dict[str, str] = {
    "B200 SXM6 180GB": "B200",
    "B300 SXM6 268GB": "B300",
    "H200 SXM5 141GB": "H200-SXM",
    "H100 SXM5 80GB": "H100-SXM",
    "A100 SXM4 80GB": "A100-SXM4-80GB",
    "A100 SXM4 40GB": "A100-SXM4-40GB",
    "RTX6000 Ada 48GB": "RTX-6000-Ada",
    "RTX 6000 Ada 48GB": "RTX-6000-Ada",
    # names no edition (Workstation, Max-Q or Server): the stand-in, whose memory all three share
    "RTX PRO 6000 96GB": "RTX-PRO-6000-AnyEdition",
    "RTX A6000 48GB": "RTX-A6000",
    "L40S 48GB": "L40S",
}
_SXM = {"B200", "B300", "H200-SXM", "H100-SXM", "A100-SXM4-80GB", "A100-SXM4-40GB"}
_COUNT_PREFIX = re.compile(r"^\d+x\s+")
# The GPU count the name states: "8H100.80S.176V" (instance type), "8x H100 SXM5 80GB" (description).
_NAMED_COUNTS = ((re.compile(r"^(\d+)[A-Z]"), "instance_type"), (re.compile(r"^(\d+)x\s"), "description"))


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    yield from each_record("offers", _json.page(body, "Verda instance-types answer"), _instance_type)


def _instance_type(record: dict[str, Any]) -> Iterator[ParseItem]:
    gpu = record["gpu"]
    count = int(gpu["number_of_gpus"])
    if count == 0:
        return  # CPU node
    stated = {"instance_type": record["instance_type"], "description": gpu["description"]}
    for pattern, field in _NAMED_COUNTS:
        match = pattern.match(stated[field])
        if match and int(match[1]) != count:
            yield Rejected("offers", (f"gpu_count_mismatch: number_of_gpus {count} but the {field} {stated[field]!r} states {match[1]}",), record)
            return
    name = _COUNT_PREFIX.sub("", gpu["description"]).strip()
    gpu_model, why = mapped(GPU_DESCRIPTIONS, name, provider="verda")  # unlisted names by the catalog rules
    if gpu_model is None:
        yield Rejected("offers", (str(why),), record)
        return
    on_demand = _price(record["price_per_hour"])
    if on_demand is None:
        yield Rejected("offers", (f"no_price: {record['instance_type']} price_per_hour {record['price_per_hour']!r}",), record)
        return
    spot = _price(record.get("spot_price"))
    for market, price in (("on_demand", on_demand), ("spot", spot)):
        if price is None:
            continue  # no spot market for this type
        yield Offer(
            offer_id=f"{record['instance_type']}/{market}",
            instance_type=record["instance_type"],
            region="global",
            market=market,
            gpu_name=name,
            gpu_model=gpu_model,
            gpu_count=float(count),
            gpu_memory_gb=float(record["gpu_memory"]["size_in_gigabytes"]) / count,
            vcpus=float(record["cpu"]["number_of_cores"]),
            ram_gb=float(record["memory"]["size_in_gigabytes"]),
            price=price,
            price_unit="instance_hour",
            currency=record["currency"].upper(),
            availability="unknown",
            # SXM parts sit on an NVSwitch baseboard; for PCIe cards Verda states only a `p2p` speed.
            interconnect="nvswitch" if count > 1 and gpu_model in _SXM else None,
        )


def _price(value: Any) -> float | None:
    """A price string ("3.95"); zero or absent means no price."""
    if value is None or value == "":
        return None
    price = float(value)
    return price if price > 0 else None


SOURCE = Source(
    name="verda-instance-types",
    provider="verda",
    description="Verda (DataCrunch) instance types: per-instance on-demand and spot prices",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://api.datacrunch.io/v1/docs",
    gpu_targets=frozenset(GPU_DESCRIPTIONS.values()) | {"V100-16GB-AnyForm"},
)
