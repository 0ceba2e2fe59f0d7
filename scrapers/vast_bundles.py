"""Vast.ai marketplace `/api/v0/bundles/` search: on-demand and interruptible offers, per host.

Two searches run, one with `"type": "on-demand"` and one with `"type": "bid"`; every offer says
`is_bid: false`, so the market comes from the query that returned it, which travels in the page
URL (`?q=<the query as JSON>`, the GET form of the same search). On-demand offers are priced at
`dph_base`, the compute price: `dph_total` adds the storage allocated in the query. Interruptible
offers are priced at `min_bid`, the current lowest bid. Prices are per offer (all its GPUs).

`gpu_ram` is MiB of the device as the driver reports it (24564 for a 24 GB card); it is mapped
onto the card's nameplate when it lies in the usable-vs-nameplate range of `scrapers._gpus`
(a B300 reports usable MiB well below its 288 GB), and a figure that fits no nameplate of that
card is rejected. Names the reviewed table lacks ("B300") go through the same rules against the
reference table.
`num_gpus` is what the offer rents; `gpu_frac` is that share of the host's GPUs, not a fraction
of a GPU. Each host also prices storage (`storage_cost`, USD per GB-month, charged while the
instance exists, stopped or not) and bandwidth (`inet_up_cost` egress and `inet_down_cost`
ingress, USD per GB): they go to the offer's `storage_usd_per_gb_month`, `egress_usd_per_gb` and
`ingress_usd_per_gb`, which the cost model uses in place of provider-wide terms.

Keyless searches return at most 64 offers (since 2026-06-23); with `VAST_API_KEY` the key is
sent as a bearer token and the search is complete.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.schemas.units import gb_from_mib
from gpucat.scrapers._gpus import MIB_GB, fits_nameplate, resolve
from gpucat.scrapers._jsonstream import iter_array
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "console.vast.ai"
URL = f"https://{HOST}/api/v0/bundles/"
# The vast CLI's default filters and storage (vast-ai/vast-cli `search offers`: verified, not
# external, rentable, not rented; 5 GB allocated), cheapest first so that the keyless cap keeps
# the cheapest offers. The market (`type`) is added per search.
BASE_QUERY: dict[str, Any] = {
    "verified": {"eq": True},
    "external": {"eq": False},
    "rentable": {"eq": True},
    "rented": {"eq": False},
    "num_gpus": {"gte": 1},
    "order": [["dph_total", "asc"]],
    "allocated_storage": 5.0,
}
KEYED_LIMIT = 3000  # the limit gpuhunt asks for when it wants everything (vastai.py)
MARKETS = {"on-demand": "on_demand", "bid": "spot"}

# Vast gpu_name -> {nameplate GB: canonical gpu_model}. Names as the bundles API spells them
# (gpuhunt vastai.py GPU_MAPPING and rules; vast CLI docs); nameplates from gpu_models.csv.
GPUS: dict[str, dict[int, str]] = {
    "H100 SXM": {80: "H100-SXM"},
    "H100 PCIE": {80: "H100-PCIe"},
    "H100 NVL": {94: "H100-NVL"},
    "H200": {141: "H200-SXM"},
    "H200 NVL": {141: "H200-NVL"},
    "B200": {180: "B200"},
    "A100 SXM4": {40: "A100-SXM4-40GB", 80: "A100-SXM4-80GB"},
    "A100 PCIE": {40: "A100-PCIe-40GB", 80: "A100-PCIe-80GB"},
    "L40S": {48: "L40S"},
    "L40": {48: "L40"},
    "L4": {24: "L4"},
    "A40": {48: "A40"},
    "A10": {24: "A10"},
    "Tesla T4": {16: "T4"},
    "RTX A6000": {48: "RTX-A6000"},
    "RTX A5000": {24: "RTX-A5000"},
    "RTX A4000": {16: "RTX-A4000"},
    "RTX 6000Ada": {48: "RTX-6000-Ada"},
    "RTX 4000Ada": {20: "RTX-4000-Ada"},
    "RTX 5090": {32: "RTX-5090"},
    "RTX 4090": {24: "RTX-4090"},
    "RTX 3090": {24: "RTX-3090"},
}
_SXM = {"H100-SXM", "H200-SXM", "B200", "B300", "A100-SXM4-40GB", "A100-SXM4-80GB"}


def query(market: str, *, keyed: bool) -> dict[str, Any]:
    q = {**BASE_QUERY, "type": market}
    if keyed:
        q["limit"] = KEYED_LIMIT
    return q


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    headers = {"Authorization": f"Bearer {fetcher.api_key}"} if fetcher.api_key else None
    for market in MARKETS:
        q = query(market, keyed=bool(fetcher.api_key))
        yield fetcher.get(URL, params={"q": json.dumps(q, separators=(",", ":"), sort_keys=True)}, headers=headers)


def market_of(url: str) -> str:
    """The market of a page, from the search it answers (the `q` parameter of its URL)."""
    try:
        q = json.loads((parse_qs(urlsplit(url).query).get("q") or ["null"])[0])
    except ValueError:
        q = None
    market = MARKETS.get(q.get("type")) if isinstance(q, dict) else None
    if market is None:
        raise ParseError(f"Vast page URL does not say which search it answers (no q with type on-demand|bid): {url[:200]}")
    return market


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    market = market_of(url)
    # Streamed: a keyed search answers every offer at once (about 1.7 KB each; 100k is 170 MB).
    yield from each_record("offers", iter_array(body, "offers", "Vast response"), lambda offer: [_offer(offer, market)])


def _offer(o: dict[str, Any], market: str) -> ParseItem:
    name: str = o["gpu_name"]
    gpu_model, problem = _model(name, o["gpu_ram"])
    price = o["dph_base"] if market == "on_demand" else o["min_bid"]
    problems = [problem] if problem else []
    if not isinstance(price, int | float) or price <= 0:
        field = "dph_base" if market == "on_demand" else "min_bid"
        problems.append(f"no_price: {field} {price!r}")
    if problems:
        return Rejected("offers", tuple(problems), o)
    count = o["num_gpus"]
    cores, effective = o["cpu_cores"], o["cpu_cores_effective"]
    # cpu_ram is the host's; the offer gets the same share of it as of the cores.
    ram_gb = gb_from_mib(o["cpu_ram"] * effective / cores) if cores and effective and o["cpu_ram"] else None
    available = bool(o["rentable"]) and not o["rented"]
    return Offer(
        offer_id=f"{o['id']}/{market}",
        instance_type=f"{count}x {name} (machine {o['machine_id']})",
        region=o["geolocation"] or "unknown",
        market=market,
        gpu_name=name,
        gpu_model=gpu_model,
        gpu_count=float(count),
        vcpus=float(effective) if effective else None,
        ram_gb=ram_gb,
        price=round(float(price), 6),
        price_unit="instance_hour",
        currency="USD",
        availability="available" if available else "unavailable",
        available_count=count if available else 0,
        interconnect=None if count == 1 else ("nvswitch" if gpu_model in _SXM else None),
        storage_usd_per_gb_month=_price(o["storage_cost"]),
        egress_usd_per_gb=_price(o["inet_up_cost"]),
        ingress_usd_per_gb=_price(o["inet_down_cost"]),
    )


def _model(name: str, gpu_ram_mib: float | None) -> tuple[str | None, str | None]:
    """The canonical model for a Vast GPU name and its reported MiB, or the reason there is none."""
    if not gpu_ram_mib:
        return None, f"no_gpu_memory: gpu_ram {gpu_ram_mib!r} for {name!r}"
    reported_gb = gpu_ram_mib * MIB_GB / 1000
    nameplates = GPUS.get(name)
    if nameplates is None:
        try:
            return resolve(name, provider="vast", memory_gb=reported_gb), None
        except LookupError as exc:
            return None, str(exc)
    for nameplate, model in nameplates.items():
        if fits_nameplate(reported_gb, nameplate):
            return model, None
    return None, f"memory_mismatch: {gpu_ram_mib} MiB fits no {name!r} nameplate ({', '.join(f'{n} GB' for n in nameplates)})"


def _price(value: float | None) -> float | None:
    """A host's storage or bandwidth price as given, to 1e-9 USD; None when the host gave none."""
    return None if value is None else round(float(value), 9)


SOURCE = Source(
    name="vast-bundles",
    provider="vast",
    description="Vast.ai marketplace offers: on-demand and interruptible (bid) per-offer prices with host storage/bandwidth prices",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="VAST_API_KEY",
    api_key_required=False,
    docs_url="https://vast.ai/developers/api",
    max_response_bytes=2 * 10**9,  # parsed as a stream: memory is bound by one offer, not the answer
    gpu_targets=frozenset(model for models in GPUS.values() for model in models.values()) | {"B300", "GTX-1080-Ti"},  # by the catalog rules
)
