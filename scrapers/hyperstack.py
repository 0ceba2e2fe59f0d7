"""Hyperstack (NexGen Cloud) pricebook: on-demand and spot prices per GPU-hour, by GPU model.

`GET https://infrahub-api.nexgencloud.com/v1/pricebook` answers a bare JSON array (no envelope)
of `{id, name, value, original_value, discount_applied, start_time, end_time}`: `value` is the
hourly price after any discount (docs.hyperstack.cloud api-reference pricebook). It needs a key,
sent raw in the `api_key` header; `HYPERSTACK_API_KEY` is the variable Hyperstack's own Python
client reads, so a keyless refresh skips this source. GPU entries are named like the flavors'
`gpu` field (`H100-80G-SXM5`, `H100-80G-PCIe-NVLink`, `A100-80G-PCIe`), with a `-spot` suffix for
spot VMs; SXM, "NVLink" (PCIe cards paired by a bridge) and plain PCIe are different offers.
The pricebook is one price list for every region and flavor size, so each GPU gives one offer
for one GPU in region `global`, stock unknown. Entries that are not GPUs (CPU, storage, IPs) are
skipped and counted; a GPU-looking name outside the reviewed table is `unknown_gpu`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.scrapers import _gpus, _json
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "infrahub-api.nexgencloud.com"
URL = f"https://{HOST}/v1/pricebook"

# Hyperstack GPU name -> canonical gpu_model. "NVLink" names PCIe cards paired by a bridge: the
# same card as plain PCIe, a different offer (its instance_type keeps the name). Names as the flavors
# and pricebook spell them (public collectors joining /core/flavors to /pricebook by this name,
# 2026-08-24; the documented pricebook example is RTX-A4000).
GPU_NAMES: dict[str, str] = {
    "H100-80G-SXM5": "H100-SXM",
    "H100-80G-PCIe-NVLink": "H100-PCIe",
    "H100-80G-PCIe": "H100-PCIe",
    "H200-141G-SXM5": "H200-SXM",
    "A100-80G-SXM4": "A100-SXM4-80GB",
    "A100-80G-PCIe-NVLink": "A100-PCIe-80GB",
    "A100-80G-PCIe": "A100-PCIe-80GB",
    "B200-SXM": "B200",
    "B300-SXM": "B300",
    "L40": "L40",
    "RTX-A4000": "RTX-A4000",
    "RTX-A5000": "RTX-A5000",
    "RTX-A6000": "RTX-A6000",
    "RTX-PRO6000-SE": "RTX-PRO-6000-Server",
}
_SPOT = "-spot"
# Names that look like a GPU (A100-…, H200-…, L40, RTX-…, GB200…): outside the table they are unknown GPUs.
_GPU_LIKE = re.compile(r"^(?:[ABHL]\d{1,3}|GB\d|GH\d|MI\d|RTX|GEFORCE)", re.IGNORECASE)


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL, headers={"api_key": fetcher.api_key or ""})


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    entries = _json.document(body, "Hyperstack pricebook")
    if not isinstance(entries, list):
        # An error answer is an object ({"status": false, "message": ...}), never the price list.
        message = entries.get("message") if isinstance(entries, dict) else None
        raise ParseError(f"Hyperstack pricebook is not a list of prices{f': {message}' if message else ''}")
    not_gpu: list[str] = []
    for item in each_record("offers", entries, lambda entry: [_offer(entry, fetched_at)]):
        if isinstance(item, str):
            not_gpu.append(item)
        else:
            yield item
    if not_gpu:
        yield Skipped("not_gpu: not a GPU in the pricebook", len(not_gpu), tuple(sorted(set(not_gpu)))[:5])


def _offer(entry: dict[str, Any], fetched_at: datetime) -> ParseItem | str:
    name = entry["name"]
    spot = name.endswith(_SPOT)
    base = name[: -len(_SPOT)] if spot else name
    if base not in GPU_NAMES and not _GPU_LIKE.match(base):
        return name
    mapped, why = _gpus.mapped(GPU_NAMES, base, provider="hyperstack")  # names outside the table by the catalog rules
    if mapped is None:
        return Rejected("offers", (str(why),), entry)
    value = entry["value"]
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return Rejected("offers", (f"no_price: {value!r}",), entry)
    if _expired(entry.get("end_time"), fetched_at):
        return Rejected("offers", (f"expired_price: ended {entry['end_time']}",), entry)
    gpu_model = mapped
    market = "spot" if spot else "on_demand"
    return Offer(
        offer_id=f"{base}/global/{market}",
        instance_type=base,
        region="global",
        market=market,
        gpu_name=base,
        gpu_model=gpu_model,
        gpu_count=1.0,
        price=float(value),
        price_unit="gpu_hour",
        currency="USD",
        availability="unknown",
        # interconnect: one GPU
    )


def _expired(end_time: Any, fetched_at: datetime) -> bool:
    """A price whose end_time has passed no longer applies; null (the usual case) never ends."""
    if not end_time:
        return False
    try:
        ends = datetime.fromisoformat(str(end_time).replace("Z", "+00:00"))
    except ValueError:
        return False
    return ends.tzinfo is not None and ends <= fetched_at


SOURCE = Source(
    name="hyperstack",
    provider="hyperstack",
    description="Hyperstack pricebook: on-demand and spot prices per GPU-hour (SXM, NVLink, PCIe)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="HYPERSTACK_API_KEY",
    api_key_required=True,
    docs_url="https://docs.hyperstack.cloud/docs/api-reference/pricebook-resources/pricebook",
    gpu_targets=frozenset(GPU_NAMES.values()),
)
