"""Google Cloud Billing Catalog: Compute Engine GPU and TPU SKUs, per region, on-demand and Spot.

The catalog prices a GPU *attached* to a VM per GPU-hour; the VM's vCPUs and memory are
separate SKUs, so these offers say `tier="gpu_attach"` (host billed on top). A4's
"(1 gpu slice)" SKUs are the per-GPU share of a whole a4-highgpu machine (`tier="gpu_slice"`).
TPU v5e/v5p/v6e are priced per chip-hour (`tier="tpu_chip"`, one chip per offer).
Commitments, DWS (calendar mode and defined duration), sole tenancy and reservations are other
ways to buy and are left out; Spot is `usageType=Preemptible` (a Spot TPU SKU keeps `OnDemand`
and says "Preemptible" in its description). One SKU lists every region it is
priced in (`serviceRegions`), so each region becomes its own offer. The catalog says nothing
about capacity: availability is `unknown`.

The key (`GCP_API_KEY`) travels as the `key=` query parameter, which the HTTP layer redacts
from captures, logs and page URLs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.scrapers import _json, _paging
from gpucat.scrapers._gpus import Wording, resolve, words
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "cloudbilling.googleapis.com"
COMPUTE_ENGINE = "6F81-5844-456A"
URL = f"https://{HOST}/v1/services/{COMPUTE_ENGINE}/skus"
PAGE_SIZE = 5000  # as gputable asks; the catalog is about 35k SKUs over about 7 pages (providers.md)
MAX_PAGES = 50

# GPU part of a SKU description -> (canonical gpu_model, GCP accelerator type, pricing tier).
# Descriptions from public Billing Catalog samples (sc-crawler tests, gpuhunt gcp.py, a GCP
# spot-price Go test); form factors from the machine families that carry each GPU: A2 and A2
# Ultra are HGX A100 (SXM4), A3 High/Mega are HGX H100 (SXM), A3 Ultra is HGX H200 (SXM), G4
# carries the RTX PRO 6000 Blackwell Server Edition ("The G4 VM, powered by NVIDIA's RTX PRO 6000
# Blackwell Server Edition GPUs", GKE release notes 2025-10-21,
# cloud.google.com/kubernetes-engine/docs/release-notes), so "RTX 6000 96GB" is RTX-PRO-6000-Server.
GPUS: dict[str, tuple[str, str, str]] = {
    "Nvidia Tesla T4": ("T4", "nvidia-tesla-t4", "gpu_attach"),
    "Nvidia L4": ("L4", "nvidia-l4", "gpu_attach"),
    "Nvidia Tesla A100": ("A100-SXM4-40GB", "nvidia-tesla-a100", "gpu_attach"),
    "Nvidia Tesla A100 80GB": ("A100-SXM4-80GB", "nvidia-a100-80gb", "gpu_attach"),
    "Nvidia H100 80GB": ("H100-SXM", "nvidia-h100-80gb", "gpu_attach"),
    "Nvidia H100 80GB Mega": ("H100-SXM", "nvidia-h100-mega-80gb", "gpu_attach"),
    "Nvidia H100 80GB Plus": ("H100-SXM", "nvidia-h100-mega-80gb", "gpu_attach"),
    "Nvidia H100 Mega 80GB": ("H100-SXM", "nvidia-h100-mega-80gb", "gpu_attach"),
    "H200 141GB": ("H200-SXM", "nvidia-h200-141gb", "gpu_attach"),
    "RTX 6000 96GB": ("RTX-PRO-6000-Server", "nvidia-rtx-pro-6000", "gpu_attach"),
    "A4 Nvidia B200 (1 gpu slice)": ("B200", "nvidia-b200", "gpu_slice"),
}


def _said(gpu: str) -> Wording:
    """A description's GPU as the catalog rules read it: "Nvidia A100 80GB" and "Nvidia Tesla A100
    80GB", or "H100 80GB" and "Nvidia H100 80GB", say the same card in GCP's own catalog."""
    return words(gpu)


# The reviewed table by what its keys say, so a description that drops or adds a vendor word
# still finds GCP's own reading of the card (SXM for its A100 and H100 machines) instead of a
# form-factor stand-in.
_GPUS_BY_WORDS: dict[Wording, tuple[str, str, str]] = {}
for _key, _value in GPUS.items():
    _GPUS_BY_WORDS.setdefault(_said(_key), _value)
# TPU v5e, v5p and v6e are priced per chip-hour in this (Compute Engine) catalog, in SKUs whose
# text names "TpuV5e", "TpuV5p" or "TpuV6e" (skypilot fetch_gcp.py). Older TPUs live in the
# separate Cloud TPU service (E000-3F24-B8AA) and are not read here.
TPUS = {"v5e": "TPU-v5e", "v5p": "TPU-v5p", "v6e": "TPU-v6e"}
_TPU = re.compile(r"TpuV(5e|5p|6e)\b")
# Machine types GCP does not sell plain on-demand (only Spot, reservations or DWS): gpuhunt's
# gcp.py filter, citing cloud.google.com/compute/docs/accelerator-optimized-machines
# #consumption_option_availability_by_machine_type. The catalog still lists an on-demand SKU.
NO_PLAIN_ON_DEMAND = {"nvidia-h200-141gb": "a3-ultragpu", "nvidia-b200": "a4-highgpu"}
# Other ways to buy the same GPU; none is an on-demand or Spot rental.
OTHER_PURCHASE_WORDS = ("Commitment", "Sole Tenancy", "DWS", "Calendar Mode", "Reserved", "Reservation")
_DESCRIPTION = re.compile(
    r"^(?:Spot Preemptible )?(?P<gpu>.+?)(?: GPU)?(?: attached to Spot Preemptible VMs)? running in (?P<place>.+)$"
)
USAGE_MARKETS = {"OnDemand": "on_demand", "Preemptible": "spot"}
# A GPU sold with an NVIDIA RTX Virtual Workstation licence ("Nvidia Tesla T4 Virtual Workstation
# GPU running in ..."): the licence's price rides on the GPU's, so it is no plain GPU rental.
_WORKSTATION = " Virtual Workstation"


WHAT = "GCP Billing Catalog response"


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    params = {"currencyCode": "USD", "pageSize": PAGE_SIZE, "key": fetcher.api_key}
    pages = _paging.Cursor(("nextPageToken",), "pageToken")  # the last page carries "" (or no token at all)
    yield from _paging.paginate(fetcher, URL, pages, what="GCP Billing Catalog", max_pages=MAX_PAGES, params=params)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    yield from each_record("offers", _json.member(_load(body), WHAT, "skus"), _offers)


def _offers(sku: dict[str, Any]) -> Iterator[ParseItem]:
    if sku["category"]["resourceGroup"] not in ("GPU", "TPU"):
        return  # vCPU, RAM, disk, licence SKUs are not accelerator offers
    description: str = sku["description"]
    usage: str = sku["category"]["usageType"]
    if usage not in USAGE_MARKETS or any(word in description for word in OTHER_PURCHASE_WORDS):
        return  # a commitment, reservation, DWS or sole-tenancy price: not an on-demand/Spot rental
    if _WORKSTATION in description:
        yield Skipped("not_rental: GPU with a Virtual Workstation licence", 1, (description,))
        return
    identified = _tpu(description, usage) if sku["category"]["resourceGroup"] == "TPU" else _gpu(description, usage)
    if isinstance(identified, str):
        yield Rejected("offers", (identified,), sku)
        return
    gpu_name, gpu_model, accelerator, tier, market = identified
    expression = sku["pricingInfo"][0]["pricingExpression"]
    unit_price, price = _list_price(expression["tieredRates"])
    problems = []
    if expression["usageUnit"] != "h":
        problems.append(f"unexpected_unit: {expression['usageUnit']!r} (expected 'h')")
    if unit_price["currencyCode"] != "USD":
        problems.append(f"unexpected_currency: {unit_price['currencyCode']!r}")
    if price <= 0:
        problems.append(f"no_price: {price} USD per {'chip' if tier == 'tpu_chip' else 'GPU'}-hour is a placeholder")
    if not sku["serviceRegions"]:
        problems.append("no_region: serviceRegions is empty")
    if problems:
        yield Rejected("offers", tuple(problems), sku)
        return
    for region in sku["serviceRegions"]:
        yield Offer(
            offer_id=f"{sku['skuId']}/{region}",
            instance_type=accelerator,
            region=region,
            market=market,
            tier=tier,
            gpu_name=gpu_name,
            gpu_model=gpu_model,
            gpu_count=1.0,
            price=round(price, 9),
            price_unit="gpu_hour",
            currency="USD",
            availability="unknown",
        )


Identified = tuple[str, str, str, str, str]  # gpu_name, gpu_model, accelerator type, tier, market


def _gpu(description: str, usage: str) -> Identified | str:
    """What a GPU SKU sells, or why it cannot be trusted."""
    market = USAGE_MARKETS[usage]
    if market == "on_demand" and "Preemptible" in description:
        return f"inconsistent_market: usageType OnDemand on {description!r}"
    match = _DESCRIPTION.match(description)
    if match is None:
        return f"unknown_gpu: {description!r}"
    known = GPUS.get(match["gpu"]) or _GPUS_BY_WORDS.get(_said(match["gpu"])) or _by_grammar(match["gpu"])
    if isinstance(known, str):
        return known
    gpu_model, accelerator, tier = known
    if market == "on_demand" and accelerator in NO_PLAIN_ON_DEMAND:
        return f"not_rentable_on_demand: {NO_PLAIN_ON_DEMAND[accelerator]} is sold only as Spot, reservations or DWS"
    return match["gpu"], gpu_model, accelerator, tier, market


def _by_grammar(gpu: str) -> tuple[str, str, str] | str:
    """A GPU the reviewed table lacks, read by GCP's description grammar ("Nvidia Tesla P100"):
    the accelerator type is GCP's own spelling of the same words (nvidia-tesla-p100), the model
    comes from the catalog rules (with GCP's documented form factor where the family has several)."""
    try:
        model = resolve(gpu, provider="gcp")
    except LookupError as exc:
        return f"{exc} in {gpu!r}"
    accelerator = "nvidia-" + "-".join(t for t in gpu.casefold().split() if t != "nvidia")
    return model, accelerator, "gpu_attach"


def _tpu(description: str, usage: str) -> Identified | str:
    """What a TPU SKU sells. Preemptible TPU SKUs keep usageType OnDemand and say so in the text."""
    match = _TPU.search(description)
    if match is None:
        return f"unknown_gpu: {description!r}"
    version = f"v{match[1].lower()}"
    market = "spot" if usage == "Preemptible" or "Preemptible" in description else "on_demand"
    return match[0], TPUS[version], f"tpu-{version}", "tpu_chip", market


def _list_price(tiers: list[dict[str, Any]]) -> tuple[dict[str, Any], float]:
    """The rate a first hour pays: the lowest tier, unless it is a free allowance before a paid one.

    Money is `units` (an int64, so a JSON string) plus `nanos`; proto3 JSON leaves out zeros,
    so a free tier can be `{"currencyCode": "USD"}` alone.
    """
    priced = [(tier["unitPrice"], int(tier["unitPrice"].get("units") or 0) + tier["unitPrice"].get("nanos", 0) / 1e9) for tier in tiers]
    return next((p for p in priced if p[1] > 0), priced[0])


def _load(body: IO[bytes]) -> dict[str, Any]:
    payload = _json.page(body, WHAT, kind=dict)
    if "error" in payload:
        raise ParseError(f"GCP Billing Catalog error: {str(payload['error'])[:300]}")
    return payload


SOURCE = Source(
    name="gcp-billing",
    provider="gcp",
    description="GCP Cloud Billing Catalog: Compute Engine GPU and TPU SKUs per region, on-demand and Spot (per GPU or chip hour)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="GCP_API_KEY",
    api_key_required=True,
    docs_url="https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list",
    # What the reviewed table maps, plus what the vendor grammar reaches for the descriptions GCP lists today.
    gpu_targets=frozenset(model for model, _, _ in GPUS.values()) | frozenset(TPUS.values()) | frozenset({"P4", "P100-PCIe-16GB", "V100-SXM2-16GB", "K80"}),
)
