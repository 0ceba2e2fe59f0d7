"""Jarvislabs `server_meta`: per-GPU prices and free GPUs by region, for containers and VMs.

`GET https://backendn.jarvislabs.net/misc/server_meta` with `Authorization: Bearer $JL_API_KEY`
(the variable Jarvislabs' own CLI and dstack's gpuhunt read; a keyless refresh skips this
source) answers `{"server_meta": [...], "cpu_meta": {...}}`. Each `server_meta` row is one GPU
type in one region for one workload type: `container` (with Jupyter/IDE), `vm` (bare SSH) or
null (older VM-capable rows). Prices are per GPU-hour; an instance takes 1..`num_gpus` GPUs, so
each row gives offers for 1, 2, 4 and 8 GPUs up to that; `effective_num_free_devices` is the
live stock. Spot exists for containers only, never for VMs, so a spot offer comes only from a
container row with a `spot_price`. `cpu_meta` holds CPU-only machines: skipped and counted.

GPU types map by the shared rules (`scrapers._gpus.resolve`, with the row's `vram`): the family
and memory decide, and where they leave a choice of form factor, Jarvislabs' own pricing page
settles it through the cited rows of `schemas/reference/gpu_form_defaults.csv` (it sells "NVIDIA
H100 SXM" and "NVIDIA H200 SXM"). A type the page does not settle ("NVIDIA A100 80GB": SXM or PCIe?
"NVIDIA RTX Pro 6000 Blackwell": Server, Workstation or Max-Q?) maps to the family's stand-in
(`A100-80GB-AnyForm`, `RTX-PRO-6000-AnyEdition`), which keeps the memory and claims no form factor
or edition, rather than a guess.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import resolve
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "backendn.jarvislabs.net"
URL = f"https://{HOST}/misc/server_meta"
GPU_COUNTS = (1, 2, 4, 8)

# Jarvislabs' short names of the RTX A-series ("A6000"), spelled as the card is named.
ALIASES: dict[str, str] = {"A6000": "RTX A6000", "A5000": "RTX A5000"}
# The models the rules give Jarvislabs' types (H100 and H200 through the cited form defaults).
GPU_TARGETS = frozenset({"H100-SXM", "H200-SXM", "L4", "RTX-A6000", "RTX-A5000", "A100-80GB-AnyForm", "RTX-PRO-6000-AnyEdition"})
# Multi-GPU interconnect where Jarvislabs' material states it; other SXM parts say nothing (None).
INTERCONNECT: dict[str, str] = {"H100-SXM": "nvswitch"}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL, headers={"Authorization": f"Bearer {fetcher.api_key}"})


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.document(body, "Jarvislabs answer")
    yield from each_record("offers", _json.member(payload, "Jarvislabs answer", "server_meta"), _offers)
    combos = ((payload.get("cpu_meta") or {}).get("combinations")) or []
    if combos:
        names = tuple(sorted({f"cpu-{c.get('vcpus')}x{c.get('ram_gb')}" for c in combos}))[:5]
        yield Skipped("not_gpu: CPU-only machine (cpu_meta)", len(combos), names)


def _offers(row: dict[str, Any]) -> Iterator[ParseItem]:
    gpu_type, _region = row["gpu_type"], row["region"]  # both required: a row without a region is malformed
    workload = row.get("workload_type") or "vm"  # null marks older VM-capable rows
    try:
        gpu_model = resolve(ALIASES.get(gpu_type, gpu_type), provider="jarvislabs", memory_gb=_number(row.get("vram")))
    except LookupError as exc:
        yield Rejected("offers", (str(exc),), row)
        return
    price = _number(row.get("price_per_hour"))
    if not price or price <= 0:
        yield Rejected("offers", (f"no_price: {row.get('price_per_hour')!r}",), row)
        return
    free = _int(row.get("effective_num_free_devices"))
    markets = [("on_demand", price, free if free is not None else _int(row.get("num_free_devices")))]
    spot = _number(row.get("spot_price"))
    if workload == "container" and spot and spot > 0:
        markets.append(("spot", spot, _int(row.get("spot_num_free_devices"))))
    max_gpus = _int(row.get("num_gpus")) or 1
    for market, quoted, free in markets:
        for count in (n for n in GPU_COUNTS if n <= max_gpus):
            yield _offer(row, gpu_model, workload, market, quoted, free, count)


def _offer(
    row: dict[str, Any], gpu_model: str, workload: str, market: str, price: float, free: int | None, count: int
) -> Offer:
    cpus, ram = _number(row.get("cpus_per_gpu")), _number(row.get("ram_per_gpu"))
    return Offer(
        offer_id=f"{row['gpu_type']}/{row['region']}/{workload}/{market}/{count}x",
        instance_type=f"{count}x {row['gpu_type']} {workload}",
        region=row["region"],
        market=market,
        tier=workload,
        gpu_name=row["gpu_type"],
        gpu_model=gpu_model,
        gpu_count=float(count),
        gpu_memory_gb=_number(row.get("vram")),
        vcpus=cpus * count if cpus else None,
        ram_gb=ram * count if ram else None,
        price=price,
        price_unit="gpu_hour",
        currency="USD",
        availability="unknown" if free is None else ("available" if free >= count else "unavailable"),
        available_count=free,
        interconnect=None if count == 1 else INTERCONNECT.get(gpu_model, "pcie" if gpu_models()[gpu_model].form_factor == "PCIe" else None),
    )


def _number(value: Any) -> float | None:
    """Numbers come as numbers or as strings ("24", "8"); anything else is missing."""
    if isinstance(value, bool) or not isinstance(value, int | float | str) or value == "":
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _int(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


SOURCE = Source(
    name="jarvislabs",
    provider="jarvislabs",
    description="Jarvislabs server_meta: per-GPU prices and free GPUs per region; spot for containers only",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="JL_API_KEY",
    api_key_required=True,
    docs_url="https://jarvislabs.ai/pricing",
    gpu_targets=GPU_TARGETS,
)
