"""Cudo Compute machine types: VMs priced by component, summed into a stated configuration.

`GET /v1/vms/machine-types` (public JSON) lists one record per machine type per data centre,
with hourly prices per GPU, per vCPU, per GiB of RAM and per GiB of disk, each a decimal string
in `{"value": …}`. Cudo sells no fixed sizes, so gpucat prices one stated configuration per GPU
count: per GPU, 4 vCPUs (within the type's vCPU-per-GPU range) and 4 GiB of RAM per vCPU (within
its vCPU-per-GiB range), plus a 100 GiB boot disk; the public IPv4 address is optional and left
out. The offer's instance type spells the configuration out.

Stock is live: `maxGpuFree` is the most GPUs free on one host. Offers are made for 1, 2, 4 and 8
GPUs up to that number (a 1-GPU offer, `unavailable`, when none is free); `available_count` is
`maxGpuFree` (vCPU and RAM stock are not checked). A zero GPU price is a placeholder and is
rejected. CPU-only types are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import Offer, ParseItem, Rejected
from gpucat.schemas.units import gb_from_gib
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import mapped
from gpucat.scrapers.base import Fetcher, Page, Source, each_record

HOST = "rest.compute.cudo.org"
URL = f"https://{HOST}/v1/vms/machine-types"
GPU_COUNTS = (1, 2, 4, 8)
VCPUS_PER_GPU = 4
RAM_GIB_PER_VCPU = 4
BOOT_DISK_GIB = 100

# Cudo `gpuModel` -> canonical model. Reviewed 2026-12 against the strings in gpuhunt's Cudo
# provider GPU_MAP (before gpuhunt dropped Cudo, commit 064e1d6^) and its test records.
# "V100" is left out (SXM2 or PCIe, 16 or 32 GB not stated), so it is rejected.
GPU_MODELS: dict[str, str] = {
    "RTX A5000": "RTX-A5000",
    "RTX A6000": "RTX-A6000",
    "RTX 3080": "RTX-3080",
    "A40 (compute mode)": "A40",
    "L40S (compute mode)": "L40S",
    "A100 80GB PCIe": "A100-PCIe-80GB",
    "H100 SXM": "H100-SXM",
    "H100 NVL": "H100-NVL",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    yield from each_record("offers", _json.page(body, "Cudo answer", "machineTypes"), _machine_type)


def _machine_type(record: dict[str, Any]) -> Iterator[ParseItem]:
    gpu_name = record["gpuModel"]
    if not gpu_name:
        return  # CPU-only machine type
    gpu_model, why = mapped(GPU_MODELS, gpu_name, provider="cudo")  # unlisted names by the catalog rules
    if gpu_model is None:
        yield Rejected("offers", (str(why),), record)
        return
    gpu_price = _hourly(record, "gpuPriceHr")
    if gpu_price <= 0:
        yield Rejected("offers", (f"no_price: {record['machineType']} in {record['dataCenterId']} gpuPriceHr is {gpu_price}",), record)
        return
    vcpu_price, ram_price, disk_price = (_hourly(record, key) for key in ("vcpuPriceHr", "memoryGibPriceHr", "minStorageGibPriceHr"))
    vcpus_per_gpu = min(max(VCPUS_PER_GPU, record["minVcpuPerGpu"]), record["maxVcpuPerGpu"])
    free = int(record["maxGpuFree"])
    for count in [n for n in GPU_COUNTS if n <= max(free, 1)]:
        vcpus = vcpus_per_gpu * count
        ram_gib = _ram_gib(vcpus, record["minVcpuPerMemoryGib"], record["maxVcpuPerMemoryGib"])
        price = gpu_price * count + vcpu_price * vcpus + ram_price * ram_gib + disk_price * BOOT_DISK_GIB
        config = f"{count}x {gpu_name}, {vcpus} vCPU, {ram_gib} GiB RAM, {BOOT_DISK_GIB} GiB disk"
        yield Offer(
            offer_id=f"{record['dataCenterId']}/{record['machineType']}/{count}x",
            instance_type=f"{record['machineType']} ({config})",
            region=record["dataCenterId"],
            market="on_demand",
            gpu_name=gpu_name,
            gpu_model=gpu_model,
            gpu_count=float(count),
            # gpu_memory_gb: Cudo states no GPU memory: the model's nameplate
            vcpus=float(vcpus),
            ram_gb=gb_from_gib(ram_gib),
            price=round(price, 6),
            price_unit="instance_hour",
            currency="USD",
            availability="available" if count <= free else "unavailable",
            available_count=free,
            # interconnect: Cudo does not say how a VM's GPUs are linked
        )


def _hourly(record: dict[str, Any], key: str) -> float:
    return float(record[key]["value"])


def _ram_gib(vcpus: int, min_vcpu_per_gib: float, max_vcpu_per_gib: float) -> int:
    """RAM_GIB_PER_VCPU per vCPU, moved into the type's allowed vCPU:GiB ratio range."""
    lowest = math.ceil(vcpus / max_vcpu_per_gib) if max_vcpu_per_gib > 0 else 1
    highest = math.floor(vcpus / min_vcpu_per_gib) if min_vcpu_per_gib > 0 else vcpus * RAM_GIB_PER_VCPU
    return max(lowest, min(vcpus * RAM_GIB_PER_VCPU, highest))


SOURCE = Source(
    name="cudo-machine-types",
    provider="cudo",
    description="Cudo Compute machine types: GPU, vCPU, RAM and disk prices summed for a stated VM per GPU count",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    gpu_targets=frozenset(GPU_MODELS.values()) | {"RTX-4000-SFF-Ada"},  # RTX 4000 SFF Ada by the catalog rules
)
