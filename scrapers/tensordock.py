"""TensorDock v2 `GET /api/v2/locations`: per-GPU prices by location, with the host's other components.

TensorDock's `price_per_hr` is per GPU and covers only the GPU: a VM also pays per vCPU-hour,
per GB-hour of RAM and per GB-hour of storage (`pricing`), chosen at deploy time up to the
location's `resources` maximum. Each offer says so in `price_excludes`, with those prices
(`vcpu 0.003 USD/h; ram 0.002 USD/GB-h; storage 0.00005 USD/GB-h`). Each location and GPU yields one offer per GPU count up to `max_count` (1, 2, 4, 8),
priced per GPU-hour. A listed GPU is deployable now, so offers are `available`; the feed gives
no stock count. The key (`TENSORDOCK_API_KEY`) goes as a bearer token; without one the feed has
been empty since about 2026-07-13 (providers.md), so the source requires it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import IO, Any

from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import mapped
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "dashboard.tensordock.com"
URL = f"https://{HOST}/api/v2/locations"
GPU_COUNTS = (1, 2, 4, 8)

# TensorDock v0Name -> canonical gpu_model. Names from TensorDock's API docs (fetch-hostnodes,
# instance-creation) and the v0 marketplace GPU list quoted in public deploy scripts.
GPUS: dict[str, str] = {
    "h100-sxm5-80gb": "H100-SXM",
    "a100-sxm4-80gb": "A100-SXM4-80GB",
    "a100-pcie-80gb": "A100-PCIe-80GB",
    "l40s-pcie-48gb": "L40S",
    "l40-pcie-48gb": "L40",
    "v100-sxm2-16gb": "V100-SXM2-16GB",
    "rtxa6000-pcie-48gb": "RTX-A6000",
    "rtxa5000-pcie-24gb": "RTX-A5000",
    "rtxa4000-pcie-16gb": "RTX-A4000",
    "geforcertx4090-pcie-24gb": "RTX-4090",
    "geforcertx3090-pcie-24gb": "RTX-3090",
}
# HGX boards: NVSwitch between the GPUs (V100 SXM2 boards use NVLink without a switch).
_SXM = {"H100-SXM", "A100-SXM4-80GB"}
COMPONENTS = {"per_vcpu_hr": ("vcpu", "h"), "per_gb_ram_hr": ("ram", "GB-h"), "per_gb_storage_hr": ("storage", "GB-h")}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL, headers={"Authorization": f"Bearer {fetcher.api_key}"})


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    locations = _json.page(body, "TensorDock response", "data", "locations")
    yield from each_record("offers", locations, lambda location: (o for gpu in location["gpus"] for o in _offers(location, gpu)))


def _offers(location: dict[str, Any], gpu: dict[str, Any]) -> Iterator[ParseItem]:
    name: str = gpu["v0Name"]
    price = gpu["price_per_hr"]
    pricing = gpu["pricing"]
    components = "; ".join(f"{label} {_num(pricing[key])} USD/{unit}" for key, (label, unit) in COMPONENTS.items())
    gpu_model, why = mapped(GPUS, name, provider="tensordock")  # unlisted names by the catalog rules
    problems = []
    if gpu_model is None:
        problems.append(str(why))
    if not isinstance(price, int | float) or price <= 0:
        problems.append(f"no_price: price_per_hr {price!r}")
    if problems:
        yield Rejected("offers", tuple(problems), {"location": location["id"], **gpu})
        return
    region = ", ".join(part for part in (location["city"], location["stateprovince"], location["country"]) if part)
    for count in (n for n in GPU_COUNTS if n <= gpu["max_count"]):
        yield Offer(
            offer_id=f"{location['id']}/{name}/{count}x",
            instance_type=f"{count}x {gpu['displayName']}",
            region=region,
            market="on_demand",
            gpu_name=name,
            gpu_model=gpu_model,
            gpu_count=float(count),
            # vcpus: chosen at deploy time, priced per component (see price_excludes)
            price=float(price),
            price_unit="gpu_hour",
            currency="USD",
            availability="available",
            interconnect=None if count == 1 else ("nvswitch" if gpu_model in _SXM else None),
            price_excludes=components,
        )


def _num(value: float | None) -> str:
    """A price as plain decimal text (0.00005, not 5e-05); `null` when the provider gave none."""
    return "null" if value is None else format(Decimal(repr(float(value))), "f")


SOURCE = Source(
    name="tensordock",
    provider="tensordock",
    description="TensorDock v2 locations: per-GPU prices (CPU, RAM and storage billed on top) per location",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="TENSORDOCK_API_KEY",
    api_key_required=True,
    docs_url="https://dashboard.tensordock.com/api/docs/fetch-hostnodes",
    gpu_targets=frozenset(GPUS.values()) | {"RTX-3080"},  # geforcertx3080-pcie-10gb by the catalog rules
)
