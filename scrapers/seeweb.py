"""Seeweb Cloud Server GPU plans (Italy): the ECS API's plan list, priced per plan-hour in EUR.

`GET https://api.seeweb.it/ecs/v2/plans` needs a token (header `X-APITOKEN`), so the source is
keyed: `SEEWEB_API_TOKEN` (the variable dstack's gpuhunt reads). The answer is
`{"status": "ok", "plans": [...]}`; numbers come as strings (`"cpu": "8"`, `"ram": "32768"` in
MiB, `"gpu": "1"`), `gpu_label` names the card with its memory (`"L40s 48GB"`), and
`available_regions` lists where the plan can be created. `hourly_price` is taken as the price
of the whole plan (as gpuhunt reads it) in euros, the currency of Seeweb's own price page;
neither is stated by the API. `available` says whether the plan is sold at all, not whether a
machine is free, so offers carry unknown availability and plans not sold are skipped, as are
CPU-only plans.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.schemas.units import gb_from_mib
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import mapped
from gpucat.scrapers.base import Fetcher, Source

HOST = "api.seeweb.it"
URL = f"https://{HOST}/ecs/v2/plans"

# gpu_label (case-folded) -> canonical gpu_model. The labels are those gpuhunt and SkyPilot's
# Seeweb fetcher map. Seeweb's price page sells its H100 and H200 as SXM ("CLOUD GPU NVIDIA H200
# 1 2 4 8 GPU SXM", seeweb.it/en/products/cloud-server-gpu as quoted by public scrapers); it does
# not say the A100's form factor, so the catalog rules map "a100 80gb" to the stand-in
# A100-80GB-AnyForm (form factor "Unstated"); they also map "a30" and "rtx 6000 24gb" (the Quadro
# RTX 6000) and reject Tenstorrent as not_a_gpu.
GPU_LABELS: dict[str, str] = {
    "h100 80gb": "H100-SXM",
    "h200 141gb": "H200-SXM",
    "l40s 48gb": "L40S",
    "l4 24gb": "L4",
    "rtx a6000 48gb": "RTX-A6000",
    # names no edition (Workstation, Max-Q or Server): the stand-in, whose memory all three share
    "rtx pro 6000 96gb": "RTX-PRO-6000-AnyEdition",
    "mi300x": "MI300X",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    headers = {"X-APITOKEN": fetcher.api_key} if fetcher.api_key else None
    yield fetcher.get(URL, headers=headers)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.page(body, "Seeweb plans answer", kind=dict)
    plans = _json.member(payload, "Seeweb plans answer", "plans")
    if payload.get("status") != "ok":
        raise ParseError(f"Seeweb plans answer has status {payload.get('status')!r}")
    for plan in plans:
        if not isinstance(plan, dict) or "name" not in plan or "gpu" not in plan or "hourly_price" not in plan:
            raise ParseError(f"Seeweb plan lacks `name`, `gpu` or `hourly_price`: {str(plan)[:200]}")
        yield from _offers(plan)


def _offers(plan: dict[str, Any]) -> Iterator[ParseItem]:
    count = _number(plan["gpu"])
    if not count or not plan.get("gpu_label"):
        return  # a CPU-only plan
    if plan.get("available") is False:
        return  # a plan Seeweb no longer sells
    price = _number(plan["hourly_price"])
    if price is None or price <= 0:
        yield Rejected("offers", (f"no_price: hourly_price {plan['hourly_price']!r}",), plan)
        return
    regions = plan.get("available_regions")
    if not isinstance(regions, list):
        raise ParseError(f"Seeweb plan {plan['name']!r}: available_regions is not a list")
    locations = list(dict.fromkeys(r["location"] for r in regions if isinstance(r, dict) and r.get("location")))
    if not locations:
        yield Rejected("offers", ("no_region: the plan lists no region",), plan)
        return
    label = " ".join(str(plan["gpu_label"]).split())
    gpu_model, why = mapped(GPU_LABELS, label, key=label.casefold(), provider="seeweb")  # unlisted labels by the catalog rules
    if gpu_model is None:
        yield Rejected("offers", (str(why),), plan)  # once per plan, not per region
        return
    cpu, ram = _number(plan.get("cpu")), _number(plan.get("ram"))
    for location in locations:
        yield Offer(
            offer_id=f"{plan['name']}/{location}",
            instance_type=plan["name"],
            region=location,
            market="on_demand",
            gpu_name=label,
            gpu_model=gpu_model,
            gpu_count=float(count),
            vcpus=float(cpu) if cpu else None,
            ram_gb=gb_from_mib(ram) if ram else None,
            price=price,
            price_unit="instance_hour",
            currency="EUR",
            availability="unknown",
        )


def _number(value: Any) -> float | None:
    """A number the API may send as a JSON number or a numeric string; None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None


SOURCE = Source(
    name="seeweb",
    provider="seeweb",
    description="Seeweb Cloud Server GPU plans (ECS API), hourly EUR prices per plan and region",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="SEEWEB_API_TOKEN",
    api_key_required=True,
    gpu_targets=frozenset(GPU_LABELS.values()) | {"A30", "Quadro-RTX-6000", "A100-80GB-AnyForm"},  # by the catalog rules
    docs_url="https://www.seeweb.it/en/products/cloud-server-gpu",
)
