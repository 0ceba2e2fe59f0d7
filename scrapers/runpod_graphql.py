"""RunPod GraphQL `gpuTypes`: secure and community cloud, on-demand and spot, per GPU type.

RunPod quotes per-GPU prices and lets a pod take 1..maxGpuCount GPUs, so each GPU type yields
offers for 1, 2, 4 and 8 GPUs (up to its maximum) in each tier and market. `lowestPrice` is the
lowest across RunPod's data centres, so `region` is `global`. stockStatus null means none in
stock. Public queries work without a key; `RUNPOD_API_KEY`, when set, is sent as a bearer token.
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

HOST = "api.runpod.io"
URL = f"https://{HOST}/graphql"
_PRICE_FIELDS = "uninterruptablePrice minimumBidPrice stockStatus minVcpu minMemory maxUnreservedGpuCount"
QUERY = (
    "query GpuTypes { gpuTypes { id displayName manufacturer memoryInGb maxGpuCount secureCloud communityCloud "
    "securePrice communityPrice secureSpotPrice communitySpotPrice "
    f"secure: lowestPrice(input: {{gpuCount: 1, secureCloud: true}}) {{ {_PRICE_FIELDS} }} "
    f"community: lowestPrice(input: {{gpuCount: 1, secureCloud: false}}) {{ {_PRICE_FIELDS} }} }} }}"
)
GPU_COUNTS = (1, 2, 4, 8)

# RunPod gpuType id -> canonical gpu_model. Ids as RunPod's GPU types table lists them
# (runpod/docs references/gpu-types.mdx); ids not there come from a real gpuTypes answer.
GPU_IDS: dict[str, str] = {
    "NVIDIA H100 80GB HBM3": "H100-SXM",
    "NVIDIA H100 PCIe": "H100-PCIe",
    "NVIDIA H100 NVL": "H100-NVL",
    "NVIDIA H200": "H200-SXM",
    "NVIDIA H200 NVL": "H200-NVL",
    "NVIDIA B200": "B200",
    "NVIDIA B300 SXM6 AC": "B300",
    "NVIDIA A100 80GB PCIe": "A100-PCIe-80GB",
    "NVIDIA A100-SXM4-80GB": "A100-SXM4-80GB",
    "NVIDIA A100-SXM4-40GB": "A100-SXM4-40GB",
    "NVIDIA A30": "A30",
    "NVIDIA A40": "A40",
    "NVIDIA L40S": "L40S",
    "NVIDIA L40": "L40",
    "NVIDIA L4": "L4",
    "NVIDIA RTX A6000": "RTX-A6000",
    "NVIDIA RTX A5000": "RTX-A5000",
    "NVIDIA RTX A4500": "RTX-A4500",
    "NVIDIA RTX A4000": "RTX-A4000",
    "NVIDIA RTX A2000": "RTX-A2000",
    "NVIDIA RTX 6000 Ada Generation": "RTX-6000-Ada",
    "NVIDIA RTX 5000 Ada Generation": "RTX-5000-Ada",
    "NVIDIA RTX 4000 Ada Generation": "RTX-4000-Ada",
    "NVIDIA RTX 4000 SFF Ada Generation": "RTX-4000-SFF-Ada",
    "NVIDIA RTX 2000 Ada Generation": "RTX-2000-Ada",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "RTX-PRO-6000-Server",
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "RTX-PRO-6000",
    "NVIDIA GeForce RTX 3070": "RTX-3070",
    "NVIDIA GeForce RTX 3080": "RTX-3080",
    "NVIDIA GeForce RTX 3080 Ti": "RTX-3080-Ti",
    "NVIDIA GeForce RTX 3090": "RTX-3090",
    "NVIDIA GeForce RTX 3090 Ti": "RTX-3090-Ti",
    "NVIDIA GeForce RTX 4070 Ti": "RTX-4070-Ti",
    "NVIDIA GeForce RTX 4080": "RTX-4080",
    "NVIDIA GeForce RTX 4080 SUPER": "RTX-4080-SUPER",
    "NVIDIA GeForce RTX 4090": "RTX-4090",
    "NVIDIA GeForce RTX 5080": "RTX-5080",
    "NVIDIA GeForce RTX 5090": "RTX-5090",
    "AMD Instinct MI300X OAM": "MI300X",
    "Tesla V100-SXM2-16GB": "V100-SXM2-16GB",
    "Tesla V100-SXM2-32GB": "V100-SXM2-32GB",
    "Tesla V100-PCIE-16GB": "V100-PCIe-16GB",
    "Tesla V100-FHHL-16GB": "V100-FHHL-16GB",
}
_SXM = {"H100-SXM", "H200-SXM", "B200", "B300", "A100-SXM4-80GB", "A100-SXM4-40GB", "V100-SXM2-16GB", "V100-SXM2-32GB"}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    headers = {"Authorization": f"Bearer {fetcher.api_key}"} if fetcher.api_key else None
    yield fetcher.post_json(URL, {"query": QUERY}, headers=headers)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.page(body, "RunPod response", kind=dict)
    if payload.get("errors"):
        messages = "; ".join(str(e.get("message", e)) for e in payload["errors"] if isinstance(e, dict))
        raise ParseError(f"RunPod GraphQL errors: {messages[:300]}")
    yield from each_record("offers", _json.member(payload, "RunPod response", "data", "gpuTypes"), _offers)


def _offers(gpu: dict[str, Any]) -> Iterator[ParseItem]:
    gpu_id = gpu["id"]
    gpu_model, why = mapped(GPU_IDS, gpu_id, provider="runpod", memory_gb=gpu.get("memoryInGb") or None)  # unlisted ids by the catalog rules
    max_gpus = gpu.get("maxGpuCount") or 1
    tiers = [tier for tier in ("secure", "community") if gpu[f"{tier}Cloud"]]
    if tiers and gpu_model is None:
        # One rejection per GPU type, not one per tier, market and count.
        yield Rejected("offers", (str(why),), gpu)
        return
    for tier in tiers:
        lowest = gpu.get(tier) or {}
        on_demand = lowest.get("uninterruptablePrice") or gpu.get(f"{tier}Price")
        spot = lowest.get("minimumBidPrice") or gpu.get(f"{tier}SpotPrice")
        if not on_demand:
            yield Rejected("offers", (f"no_price: {tier} on-demand price missing for {gpu_id!r}",), {"gpu": gpu_id, "tier": tier, **lowest})
        for market, price in (("on_demand", on_demand), ("spot", spot)):
            if not price:
                continue  # no spot market for this GPU and tier
            for count in (n for n in GPU_COUNTS if n <= max_gpus):
                yield _offer(gpu, gpu_model, tier, market, float(price), count, lowest)


def _offer(
    gpu: dict[str, Any],
    gpu_model: str | None,
    tier: str,
    market: str,
    price: float,
    count: int,
    lowest: dict[str, Any],
) -> Offer:
    stock = lowest.get("stockStatus")
    free = lowest.get("maxUnreservedGpuCount")
    available = stock is not None and (free is None or free >= count)
    vcpu, memory = lowest.get("minVcpu"), lowest.get("minMemory")
    return Offer(
        offer_id=f"{gpu['id']}/{tier}/{market}/{count}x",
        instance_type=f"{count}x {gpu.get('displayName') or gpu['id']}",
        region="global",
        market=market,
        tier=tier,
        gpu_name=gpu["id"],
        gpu_model=gpu_model,
        gpu_count=float(count),
        gpu_memory_gb=float(gpu["memoryInGb"]) if gpu.get("memoryInGb") else None,
        vcpus=float(vcpu) * count if vcpu else None,
        ram_gb=float(memory) * count if memory else None,
        price=price,
        price_unit="gpu_hour",
        currency="USD",
        availability="available" if available else "unavailable",
        available_count=int(free) if free is not None else None,
        interconnect=None if count == 1 else ("nvswitch" if gpu_model in _SXM else "pcie"),
    )


SOURCE = Source(
    name="runpod-graphql",
    provider="runpod",
    description="RunPod GraphQL gpuTypes: secure/community, on-demand/spot per-GPU prices and stock",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="RUNPOD_API_KEY",
    api_key_required=False,
    gpu_targets=frozenset(GPU_IDS.values()),
    docs_url="https://docs.runpod.io/sdks/graphql/manage-pods",
)
