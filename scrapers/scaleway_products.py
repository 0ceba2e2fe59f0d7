"""Scaleway Instance products: every Instance type of a zone with its hourly price, in EUR.

`GET /instance/v1/zones/{zone}/products/servers` is public. It answers `{"servers": {name: type}}`
with CPU and GPU types mixed, 100 per page at most, so the fetch walks pages until one comes
back short. A type's `hourly_price` is in euros for the whole instance ("Hourly price in
Euro", Scaleway's API reference); `ram` and `gpu_info.gpu_memory` are bytes. The GPU's form
factor is in `gpu_info.gpu_name` (`H100-PCIe`, `H100-SXM`) and in the type's name: `H100-2-80G`
is two H100 PCIe, `H100-SXM-2-80G` two H100 SXM. Scaleway publishes no stock here, so
availability is unknown. CPU-only types are not GPU offers and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.scrapers import _json, _paging
from gpucat.scrapers._gpus import resolve
from gpucat.scrapers.base import Fetcher, Source

HOST = "api.scaleway.com"
# GPU zones: PAR2 and WAW2 (shared/reference/providers.md, from scaleway/docs-content PR #4621);
# fr-par-1 sells the L4 and L40S sizes too (a public capture of the endpoint, 2026-10-01).
ZONES = ("fr-par-1", "fr-par-2", "pl-waw-2")
PER_PAGE = 100
MAX_PAGES = 20
_ZONE_IN_URL = re.compile(r"/zones/([a-z]{2}-[a-z]{3}-\d)/products/servers")

# gpu_info.gpu_name -> canonical gpu_model (reviewed against the captured answer of 2026-10-01).
# Other names ("P100" of RENDER-S, with its 16 GiB) go through the catalog rules of scrapers._gpus.
GPU_NAMES: dict[str, str] = {
    "H100-SXM": "H100-SXM",
    "H100-PCIe": "H100-PCIe",
    "B300-SXM": "B300",
    "L40S": "L40S",
    "L4": "L4",
}
# H100 SXM sizes are 2, 4 or 8 GPUs on 4th-generation NVLink, 900 GB/s (Scaleway changelog
# 2025-08-11, per shared/reference/providers.md); the other multi-GPU types do not say.
_NVLINK = {"H100-SXM"}


def url(zone: str) -> str:
    return f"https://{HOST}/instance/v1/zones/{zone}/products/servers"


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    pages = _paging.PageNumber("page", size=PER_PAGE, items=("servers",))  # a short page is the last
    for zone in ZONES:
        yield from _paging.paginate(fetcher, url(zone), pages, what=f"Scaleway products in {zone}", max_pages=MAX_PAGES, params={"per_page": PER_PAGE})


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    zone = _ZONE_IN_URL.search(url)
    if zone is None:
        raise ParseError(f"cannot tell the Scaleway zone from the page URL {url!r}")
    servers = _json.page(body, "Scaleway products answer", "servers", kind=dict)
    for name, server in servers.items():
        if not isinstance(server, dict) or "gpu" not in server or "hourly_price" not in server:
            raise ParseError(f"Scaleway type {name!r} lacks `gpu` or `hourly_price`")
        if not server["gpu"]:
            continue  # a CPU-only type: not a GPU offer
        yield _offer(name, server, zone.group(1))


def _offer(name: str, server: dict[str, Any], zone: str) -> Offer | Rejected:
    row = {"instance_type": name, "zone": zone, **server}
    price = server["hourly_price"]
    if isinstance(price, dict | list | str):
        # A changed wire format (e.g. a Money object) must not pass as a number.
        raise ParseError(f"Scaleway type {name!r}: hourly_price is not a number: {price!r}")
    if price is None or price <= 0:
        return Rejected("offers", (f"no_price: hourly_price {price!r}",), row)
    info = server.get("gpu_info")
    if not isinstance(info, dict) or not info.get("gpu_name"):
        return Rejected("offers", ("gpu_info missing: the type names no GPU model",), row)
    if server.get("mig_profile"):
        return Rejected("offers", (f"mig_profile {server['mig_profile']!r}: GPU slices are not mapped",), row)
    gpu_name = info["gpu_name"]
    gpu_model = GPU_NAMES.get(gpu_name)
    if gpu_model is None:
        memory = info.get("gpu_memory")
        try:
            gpu_model = resolve(gpu_name, provider="scaleway", memory_gb=memory / 1e9 if isinstance(memory, int | float) and memory > 0 else None)
        except LookupError as exc:
            return Rejected("offers", (str(exc),), row)
    if ("-SXM-" in name) != gpu_name.endswith("-SXM"):
        return Rejected("offers", (f"form_factor_conflict: type {name} but gpu_info says {gpu_name}",), row)
    count = server["gpu"]
    return Offer(
        offer_id=f"{name}/{zone}/on_demand",
        instance_type=name,
        region=zone,
        market="on_demand",
        gpu_name=gpu_name,
        gpu_model=gpu_model,
        gpu_count=float(count),
        # gpu_memory_gb: gpu_memory is the GiB CUDA sees; the nameplate GB comes from gpu_models
        vcpus=float(server["ncpus"]) if server.get("ncpus") else None,
        ram_gb=round(server["ram"] / 1e9, 3) if server.get("ram") else None,
        price=float(price),
        price_unit="instance_hour",
        currency="EUR",
        availability="unknown",
        interconnect="nvlink" if count > 1 and gpu_name in _NVLINK else None,
    )


SOURCE = Source(
    name="scaleway-products",
    provider="scaleway",
    description="Scaleway Instance types per GPU zone, hourly EUR prices",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    gpu_targets=frozenset(GPU_NAMES.values()) | {"P100-PCIe-16GB"},  # P100 (RENDER-S) by the catalog rules
    docs_url="https://www.scaleway.com/en/developers/api/instance/instance-types",
)
