"""CloudRift instance types: GPU VMs per datacenter, priced in US cents per instance-hour.

`POST https://api.cloudrift.ai/api/v1/instance-types/list` answers without credentials (dstack's
gpuhunt calls it keyless). Requests and answers are wrapped as `{"version": <date>, "data": ...}`.
Each instance type names its GPU in `brand_short` and has variants (1, 2, 4… GPUs) with
`cost_per_hour` in **cents** for the whole variant, `vram`/`dram`/`disk` in bytes, the
datacenters that have its nodes (`nodes_per_dc`, as gpuhunt reads it, or
`available_nodes_per_dc` in CloudRift's OpenAPI spec) and the free nodes per datacenter. One
offer per variant and datacenter; a type listed in no datacenter cannot be rented and is
rejected with `no_datacenter`. CPU-only variants are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import mapped
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "api.cloudrift.ai"
URL = f"https://{HOST}/api/v1/instance-types/list"
API_VERSION = "2025-03-21"  # the version gpuhunt sends; the server answers with its own
QUERY = {"version": API_VERSION, "data": {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}}}

# brand_short -> canonical gpu_model (gpuhunt's GPU_MAP names the same brands). Other brands go
# through the catalog rules with the variant's vram: "MI350X" maps; "V100" (SXM2 or PCIe unsaid)
# maps to the stand-in V100-16GB-AnyForm, whose form factor is "Unstated".
GPU_BRANDS: dict[str, str] = {
    "RTX 5090": "RTX-5090",
    "RTX 4090": "RTX-4090",
    # names no edition (Workstation, Max-Q or Server): the stand-in, whose memory all three share
    "RTX PRO 6000": "RTX-PRO-6000-AnyEdition",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.post_json(URL, QUERY)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.document(body, "CloudRift answer")
    if isinstance(payload, str):  # the API answers errors as a bare JSON string
        raise ParseError(f"CloudRift answered an error: {payload[:200]}")
    for instance_type in _json.member(payload, "CloudRift answer", "data", "instance_types"):
        if not isinstance(instance_type, dict) or "brand_short" not in instance_type or not isinstance(instance_type.get("variants"), list):
            raise ParseError(f"CloudRift instance type lacks `brand_short` or `variants`: {str(instance_type)[:200]}")
        variants = [{"brand_short": instance_type["brand_short"], **variant} for variant in instance_type["variants"]]
        yield from each_record("offers", variants, _offers)


def _offers(row: dict[str, Any]) -> Iterator[ParseItem]:
    name, count, cents = row["name"], row["gpu_count"], row["cost_per_hour"]
    if not count:
        return  # a CPU-only variant
    brand, nodes = row["brand_short"], row.get("nodes_per_dc", row.get("available_nodes_per_dc"))
    if not isinstance(nodes, dict):
        yield Rejected("offers", ("malformed_record: no nodes_per_dc / available_nodes_per_dc",), row)
        return
    if not isinstance(cents, int | float) or isinstance(cents, bool) or cents <= 0:
        yield Rejected("offers", (f"no_price: cost_per_hour {cents!r}",), row)
        return
    if not nodes:
        yield Rejected("offers", ("no_datacenter: the variant is listed in no datacenter",), row)
        return
    vram = row.get("vram")  # bytes per GPU
    gpu_model, why = mapped(GPU_BRANDS, brand, provider="cloudrift", memory_gb=vram / 1e9 if isinstance(vram, int) and vram > 0 else None)
    if gpu_model is None:
        yield Rejected("offers", (str(why),), row)  # once per variant, not per datacenter
        return
    free = row.get("available_nodes_per_dc") or {}
    for datacenter in nodes:
        stock = free.get(datacenter)
        yield Offer(
            offer_id=f"{name}/{datacenter}",
            instance_type=name,
            region=datacenter,
            market="on_demand",
            gpu_name=brand,
            gpu_model=gpu_model,
            gpu_count=float(count),
            # gpu_memory_gb: vram is GiB as the driver counts it; the nameplate GB comes from gpu_models
            vcpus=float(row["cpu_count"]) if row.get("cpu_count") else None,
            ram_gb=round(row["dram"] / 1e9, 3) if row.get("dram") else None,
            price=cents / 100,
            price_unit="instance_hour",
            currency="USD",
            availability="unknown" if stock is None else ("available" if stock > 0 else "unavailable"),
            # Free nodes, not GPUs: a node's GPU count is not published, so no GPU count here.
        )


SOURCE = Source(
    name="cloudrift",
    provider="cloudrift",
    description="CloudRift GPU VM instance types per datacenter, hourly USD prices (sent in cents) and free nodes",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    gpu_targets=frozenset(GPU_BRANDS.values()) | {"MI350X", "V100-16GB-AnyForm"},
    docs_url="https://docs.cloudrift.ai/extras/rest-api",
)
