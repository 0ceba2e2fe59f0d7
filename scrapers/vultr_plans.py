"""Vultr plans: Cloud GPU plans (`/v2/plans?type=all`) and bare-metal plans (`/v2/plans-metal`).

Both lists are public (no key) and priced per instance-hour in USD. A plan yields one offer per
location it lists; Vultr publishes where a plan can be deployed, not how many are free, so
availability is `unknown` (a region listing, not stock). `location_cost` overrides a plan's
price in one location. Bare-metal preemptible prices (`hourly_cost_preemptible`) are spot
offers; a plan with `deploy_ondemand: false` has no on-demand offer even though it lists a price.

The GPU is decoded from `gpu_type` (Cloud GPU) or, for bare metal, which has no GPU field, from
the plan id, through the reviewed tables below. vGPU slices keep their share of a card:
`gpu_count` < 1 (from Vultr's `gpu_count` "1/8" when given, else `gpu_vram_gb` over the card's
memory) and `gpu_memory_gb` is the slice's memory. CPU plans are not GPU offers and are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from fractions import Fraction
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, ParseItem, Rejected
from gpucat.schemas.units import gb_from_mib
from gpucat.scrapers import _json, _paging
from gpucat.scrapers.base import Fetcher, Page, Source, each_record

HOST = "api.vultr.com"
PLANS_URL = f"https://{HOST}/v2/plans"
METAL_URL = f"https://{HOST}/v2/plans-metal"
PER_PAGE = 500  # the API's maximum; every list fits one page today
MAX_PAGES = 20

# Cloud GPU `gpu_type` -> canonical model, and the memory of one whole card as Vultr counts it in
# `gpu_vram_gb` (a B200 plan with 1536 GB is 8 cards). Reviewed 2026-12 against plan ids and
# memory in Vultr's plan list (fixtures/vultr/vultr-plans/plans.json) and gpuhunt providers/vultr.py.
# Only "NVIDIA_A100" is seen verbatim in a public sample; the others follow its pattern (the AMD
# ones from a public client that strips an "amd_" prefix) and are unverified.
GPU_TYPES: dict[str, tuple[str, float]] = {
    "NVIDIA_A16": ("A16", 16),
    "NVIDIA_A40": ("A40", 48),
    "NVIDIA_L40S": ("L40S", 48),
    "NVIDIA_B200": ("B200", 192),
    "NVIDIA_GH200": ("GH200", 96),
    "AMD_MI300X": ("MI300X", 192),
    "AMD_MI325X": ("MI325X", 256),
    "AMD_MI355X": ("MI355X", 288),
}
# Vultr does not say SXM or PCIe for these. A whole 8-GPU node is an HGX baseboard (SXM); a
# single card or a slice could be either, so it maps to the family's stand-in, whose form factor
# is "Unstated" (scrapers/_gpus.py), rather than a guess.
GPU_TYPES_HGX_ONLY: dict[str, tuple[str, float]] = {
    "NVIDIA_A100": ("A100-SXM4-80GB", 80),
    "NVIDIA_H100": ("H100-SXM", 80),
}
FORM_UNSTATED: dict[str, str] = {"NVIDIA_A100": "A100-80GB-AnyForm", "NVIDIA_H100": "H100-80GB-AnyForm"}
HGX_GPU_COUNT = 8

# Bare-metal plan id -> (canonical model, GPUs, memory per GPU in GB). Ids and contents from
# gpuhunt providers/vultr.py BARE_METAL_GPU_DETAILS (it maps the `-l40-` plan to L40S); the
# 8-GPU A100/H100 nodes are HGX, hence SXM. `vbm-48c-1024gb-4-a100-gpu` is left out: a 4-GPU
# A100 node may be SXM or PCIe.
METAL_GPU_PLANS: dict[str, tuple[str, int, float]] = {
    "vbm-112c-2048gb-8-h100-gpu": ("H100-SXM", 8, 80),
    "vbm-112c-2048gb-8-a100-gpu": ("A100-SXM4-80GB", 8, 80),
    "vbm-64c-2048gb-8-l40-gpu": ("L40S", 8, 48),
    "vbm-72c-480gb-gh200-gpu": ("GH200", 1, 96),
    "vbm-256c-2048gb-8-mi300x-gpu": ("MI300X", 8, 192),
}
_INTERCONNECT = {
    "H100-SXM": "nvswitch",
    "A100-SXM4-80GB": "nvswitch",
    "B200": "nvswitch",
    "MI300X": "infinity_fabric",
    "MI325X": "infinity_fabric",
    "MI355X": "infinity_fabric",
    "L40S": "pcie",
    "A40": "pcie",
    "A16": "pcie",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    pages = _paging.Cursor(("meta", "links", "next"), "cursor")
    for url, params in ((PLANS_URL, {"type": "all", "per_page": PER_PAGE}), (METAL_URL, {"per_page": PER_PAGE})):
        yield from _paging.paginate(fetcher, url, pages, what=f"Vultr {url.rsplit('/', 1)[-1]}", max_pages=MAX_PAGES, params=params)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.document(body, "Vultr answer")
    if isinstance(payload, dict) and isinstance(payload.get("plans"), list):
        plans, plan_items = payload["plans"], _cloud_plan
    elif isinstance(payload, dict) and isinstance(payload.get("plans_metal"), list):
        plans, plan_items = payload["plans_metal"], _metal_plan
    else:
        raise ParseError("Vultr answer has neither a `plans` nor a `plans_metal` list")
    yield from each_record("offers", plans, plan_items)


def _cloud_plan(plan: dict[str, Any]) -> Iterator[ParseItem]:
    plan_id = plan["id"]
    if not plan_id.startswith("vcg-") and not plan.get("gpu_type"):
        return  # vc2, vhf, vhp, voc…: CPU plans
    gpu_type = plan["gpu_type"]  # a vcg- plan without it means the field was renamed
    mapped = GPU_TYPES.get(gpu_type) or GPU_TYPES_HGX_ONLY.get(gpu_type)
    if mapped is None:
        yield Rejected("offers", (f"unknown_gpu: {gpu_type!r}",), plan)
        return
    gpu_model, card_gb = mapped
    vram = float(plan["gpu_vram_gb"])
    count = _gpu_count(plan.get("gpu_count"), vram, card_gb)
    if gpu_type in GPU_TYPES_HGX_ONLY and count != HGX_GPU_COUNT:
        gpu_model = FORM_UNSTATED[gpu_type]  # not a whole HGX node: SXM or PCIe is not published
    memory = vram if count < 1 else vram / count
    yield from _offers(plan, gpu_type, gpu_model, count, memory, float(plan["vcpu_count"]), None)


def _metal_plan(plan: dict[str, Any]) -> Iterator[ParseItem]:
    plan_id = plan["id"]
    if "gpu" not in plan_id:
        return  # CPU-only bare metal
    if plan_id not in METAL_GPU_PLANS:
        yield Rejected("offers", (f"unknown_gpu: {plan_id!r}",), plan)
        return
    gpu_model, count, memory = METAL_GPU_PLANS[plan_id]
    yield from _offers(plan, plan_id, gpu_model, count, memory, float(plan["cpu_threads"]), "bare_metal")


def _gpu_count(stated: Any, vram_gb: float, card_gb: float) -> float:
    """Vultr's own count ("1/8" for a slice, or an integer) when given, else memory over one card's."""
    if isinstance(stated, str) and stated.strip():
        return float(Fraction(stated.strip()))
    if isinstance(stated, int | float) and not isinstance(stated, bool) and stated > 0:
        return float(stated)
    return round(vram_gb / card_gb, 6)


def _offers(
    plan: dict[str, Any],
    gpu_name: str,
    gpu_model: str,
    count: float,
    memory_gb: float,
    vcpus: float,
    tier: str | None,
) -> Iterator[ParseItem]:
    plan_id = plan["id"]
    on_demand_ok = plan.get("deploy_ondemand", True)
    priced = False
    for location in plan["locations"]:
        cost = (plan.get("location_cost") or {}).get(location) or plan
        markets = (
            ("on_demand", cost["hourly_cost"] if on_demand_ok else None),
            ("spot", cost.get("hourly_cost_preemptible") if _preemptible(plan) else None),
        )
        for market, price in markets:
            if not price or price <= 0:
                continue
            priced = True
            yield Offer(
                offer_id=f"{plan_id}/{location}/{market}",
                instance_type=plan_id,
                region=location,
                market=market,
                tier=tier,
                gpu_name=gpu_name,
                gpu_model=gpu_model,
                gpu_count=count,
                gpu_memory_gb=round(memory_gb, 3),
                vcpus=vcpus,
                ram_gb=gb_from_mib(plan["ram"]),  # `ram` is MiB (122880 for a "120g" plan)
                price=float(price),
                price_unit="instance_hour",
                currency="USD",
                availability="unknown",
                interconnect=_INTERCONNECT.get(gpu_model) if count >= 2 else None,
            )
    if plan["locations"] and not priced:
        yield Rejected("offers", (f"no_price: {plan_id} has no positive hourly price",), plan)


def _preemptible(plan: dict[str, Any]) -> bool:
    # Older answers lack `deploy_preemptible`; then a positive preemptible price is the signal.
    return bool(plan.get("deploy_preemptible", (plan.get("hourly_cost_preemptible") or 0) > 0))


SOURCE = Source(
    name="vultr-plans",
    provider="vultr",
    description="Vultr Cloud GPU and bare-metal plans: per-instance on-demand and preemptible prices by location",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://www.vultr.com/api/#tag/plans",
    gpu_targets=frozenset(
        [m for m, _ in GPU_TYPES.values()] + [m for m, _ in GPU_TYPES_HGX_ONLY.values()] + list(FORM_UNSTATED.values())
        + [m for m, _, _ in METAL_GPU_PLANS.values()]
    ),
)
