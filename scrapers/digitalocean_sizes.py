"""DigitalOcean `GET /v2/sizes`: GPU Droplet sizes, their hourly prices and regions.

Sizes without `gpu_info` are CPU Droplets and are skipped as not GPU offers. Prices are per
Droplet (`price_hourly`, USD), on-demand; the API has no spot or reserved prices, and the
per-contract GPU sizes (B300, MI325X, MI350X) are not listed. `gpu_info.vram.amount` is the
Droplet's total GPU memory in `vram.unit` (GiB as DigitalOcean writes it: 80 for one H100), so it
is divided by the GPU count and checked against the card's nameplate. Each region in `regions`
becomes an `available` offer; a size with no region is one `unavailable` offer in region
`unknown`. The token (`DIGITALOCEAN_TOKEN`) goes as a bearer token; pages are followed through
`links.pages.next`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.schemas.reference import gpu_models
from gpucat.schemas.units import gb_from_mib
from gpucat.scrapers import _json, _paging
from gpucat.scrapers._gpus import mapped
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "api.digitalocean.com"
URL = f"https://{HOST}/v2/sizes"
PER_PAGE = 200  # the default is 20 (pydo docs); 200 is the largest page it serves (unverified)
MAX_PAGES = 20

# gpu_info.model -> (canonical gpu_model, nameplate GB per GPU). Model strings from gpuhunt's
# digitalocean.py and its tests ("nvidia_h100", "amd_mi300x"; the "nvidia_rtx6000_ada" pattern).
# DigitalOcean's H100/H200 Droplets are HGX (SXM) machines: its GPU pricing page lists "NVIDIA
# HGX H200" (gputable, 2026-08-29); H100 follows the same HGX platform (unverified).
GPUS: dict[str, tuple[str, int]] = {
    "nvidia_h100": ("H100-SXM", 80),
    "nvidia_h200": ("H200-SXM", 141),
    "nvidia_l40s": ("L40S", 48),
    "nvidia_rtx4000_ada": ("RTX-4000-Ada", 20),
    "nvidia_rtx6000_ada": ("RTX-6000-Ada", 48),
    "amd_mi300x": ("MI300X", 192),
}
_HGX = {"H100-SXM", "H200-SXM"}
_GIB_PER_UNIT = {"gib": 1.0, "mib": 1 / 1024, "tib": 1024.0}
NAMEPLATE_TOLERANCE = 0.07


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    headers = {"Authorization": f"Bearer {fetcher.api_key}"}
    pages = _paging.NextUrl(("links", "pages", "next"))  # the next link carries page and per_page
    yield from _paging.paginate(fetcher, URL, pages, what="DigitalOcean sizes", max_pages=MAX_PAGES, params={"per_page": PER_PAGE}, headers=headers)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    sizes = _json.page(body, "DigitalOcean response", "sizes")
    yield from each_record("offers", sizes, lambda size: _offers(size) if size.get("gpu_info") else ())  # no gpu_info: a CPU Droplet


def _offers(size: dict[str, Any]) -> Iterator[ParseItem]:
    gpu = size["gpu_info"]
    model = gpu["model"]
    count = gpu["count"]
    resolved, why = mapped({k: v[0] for k, v in GPUS.items()}, model, provider="digitalocean")  # unlisted models by the catalog rules
    known = GPUS.get(model) or ((resolved, gpu_models()[resolved].memory_gb) if resolved else None)
    problems = []
    if known is None:
        problems.append(str(why))
    else:
        vram = gpu["vram"]
        factor = _GIB_PER_UNIT.get(str(vram["unit"]).lower())
        if factor is None:
            problems.append(f"unknown_unit: vram unit {vram['unit']!r}")
        else:
            per_gpu = vram["amount"] * factor / count
            if abs(per_gpu - known[1]) > known[1] * NAMEPLATE_TOLERANCE:
                problems.append(f"memory_mismatch: {per_gpu:g} GiB per GPU, {model!r} is {known[1]} GB")
    price = size["price_hourly"]
    if not isinstance(price, int | float) or price <= 0:
        problems.append(f"no_price: price_hourly {price!r}")
    if problems:
        yield Rejected("offers", tuple(problems), size)
        return
    assert known is not None
    gpu_model = known[0]
    regions = size["regions"] if size["available"] else []
    places = [(region, "available") for region in regions] or [("unknown", "unavailable")]
    for region, availability in places:
        yield Offer(
            offer_id=f"{size['slug']}/{region}",
            instance_type=size["slug"],
            region=region,
            market="on_demand",
            gpu_name=model,
            gpu_model=gpu_model,
            gpu_count=float(count),
            vcpus=float(size["vcpus"]),
            ram_gb=gb_from_mib(size["memory"]),  # MiB: 245760 for the 240 GiB H100 Droplet
            price=float(price),
            price_unit="instance_hour",
            currency="USD",
            availability=availability,
            interconnect=None if count == 1 else ("nvswitch" if gpu_model in _HGX else None),
        )



SOURCE = Source(
    name="digitalocean-sizes",
    provider="digitalocean",
    description="DigitalOcean GPU Droplet sizes: on-demand per-Droplet prices and regions",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="DIGITALOCEAN_TOKEN",
    api_key_required=True,
    docs_url="https://docs.digitalocean.com/reference/api/api-reference/#operation/sizes_list",
    gpu_targets=frozenset(model for model, _ in GPUS.values()) | {"A16"},  # nvidia_a16 by the catalog rules
)
