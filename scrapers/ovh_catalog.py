"""OVHcloud Public Cloud order catalog: GPU instance flavours and their hourly price, in EUR.

`GET /1.0/order/catalog/public/cloud?ovhSubsidiary=FR` is public. Instances are the addons the
`project` plan lists in its `instance` addon family; each flavour comes as an hourly
`<flavour>.consumption` addon and often a `<flavour>.monthly.postpaid` one. Prices are integers
in 1e-8 of the locale's currency, net of tax (a real catalog's `"price": 5699000000` with
`"tax": 1139800000` is 56.99 EUR plus 20 % VAT), per instance and per `intervalUnit`. The
specs are in `blobs.technical` (`gpu.model`, `gpu.number`, `cpu.cores`, `memory.size` in GiB),
and the orderable regions in `configurations[name=region]`, which catalogs often fill only on
the monthly addon, so a flavour's regions are merged across its addons (as SpareCores'
sc-crawler does). Each hourly GPU addon becomes one on-demand offer per region, or one offer in
region `global` when no addon of the flavour lists a region (the catalog's price holds for the
whole subsidiary, as RunPod's `global` does). Monthly plans,
Windows flavours (the Linux flavour plus a licence), CPU-only flavours and non-instance addons
(volumes, AI Training) are not separate GPU rental offers and are skipped.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.schemas.units import gb_from_gib
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import resolve
from gpucat.scrapers.base import Fetcher, Source

HOST = "eu.api.ovh.com"
URL = f"https://{HOST}/1.0/order/catalog/public/cloud"
SUBSIDIARY = "FR"
PRICE_SCALE = 10**8  # catalog prices are integers in 1e-8 of the currency
_CURRENCY = re.compile(r"^[A-Z]{3}$")

# blobs.technical.gpu.model maps by the shared rules (`scrapers._gpus.resolve`), with the card's
# memory class (`gpu.memory.size`, GB) to choose among editions. OVH states no form factor for its
# H100, A100, H200 or V100 (SXM or PCIe), and `gpu_form_defaults.csv` has no OVH row, so those map
# to the family's stand-in for their memory (`H100-80GB-AnyForm`, ...: form factor "Unstated")
# rather than a guess; "Tesla V100S" maps because NVIDIA made it as one board only (V100S-PCIe-32GB).
# The models these rules give the GPUs OVH sells.
GPU_TARGETS = frozenset(
    {"L4", "L40S", "A10", "V100S-PCIe-32GB", "Quadro-RTX-5000", "H100-80GB-AnyForm", "A100-80GB-AnyForm", "H200-141GB-AnyForm", "V100-16GB-AnyForm"}
)


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL, params={"ovhSubsidiary": SUBSIDIARY})


def read_catalog(body: IO[bytes]) -> tuple[dict[str, Any], str]:
    """The public catalog and the currency its prices are in (ovh-terms reads the same answer)."""
    catalog = _json.page(body, "OVH catalog", kind=dict)
    if not isinstance(catalog.get("addons"), list) or not isinstance(catalog.get("plans"), list):
        raise ParseError("OVH catalog lacks `addons` or `plans`")
    currency = (catalog.get("locale") or {}).get("currencyCode")
    if not isinstance(currency, str) or not _CURRENCY.match(currency):
        raise ParseError(f"OVH catalog locale names no currency: {catalog.get('locale')!r}")
    return catalog, currency


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    catalog, currency = read_catalog(body)
    instances = _instance_plan_codes(catalog["plans"])
    addons = [a for a in catalog["addons"] if isinstance(a, dict) and a.get("planCode") in instances]
    regions = _regions_by_flavour(addons)
    for addon in addons:
        yield from _offers(addon, currency, regions)


def _instance_plan_codes(plans: list[Any]) -> set[str]:
    project = next((p for p in plans if isinstance(p, dict) and p.get("planCode") == "project"), None)
    if project is None:
        raise ParseError("OVH catalog has no `project` plan to list its instances")
    family = next((f for f in project.get("addonFamilies") or [] if f.get("name") == "instance"), None)
    if family is None or not family.get("addons"):
        raise ParseError("OVH catalog's project plan has no `instance` addon family")
    return set(family["addons"])


def _regions_by_flavour(addons: list[dict[str, Any]]) -> dict[str, list[str]]:
    regions: dict[str, list[str]] = defaultdict(list)
    for addon in addons:
        for config in addon.get("configurations") or []:
            if config.get("name") == "region":
                flavour = regions[addon.get("invoiceName") or addon["planCode"]]
                flavour.extend(r for r in config.get("values") or [] if r not in flavour)
    return regions


def _offers(addon: dict[str, Any], currency: str, regions: dict[str, list[str]]) -> Iterator[ParseItem]:
    code = addon["planCode"]
    technical = (addon.get("blobs") or {}).get("technical")
    if not isinstance(technical, dict):
        raise ParseError(f"OVH instance {code!r} lacks blobs.technical")
    gpu = technical.get("gpu") or {}
    if not gpu.get("number"):
        return  # a CPU-only flavour
    if code.startswith("win-") or (technical.get("os") or {}).get("family") == "windows":
        return  # the Linux flavour with a Windows licence in the price
    hourly = [p for p in addon.get("pricings") or [] if p.get("intervalUnit") == "hour" and "consumption" in (p.get("capacities") or [])]
    if not hourly:
        return  # a monthly (or other billing) variant of a flavour whose hourly addon is an offer
    flavour = addon.get("invoiceName") or code
    row = {"planCode": code, "invoiceName": flavour, "gpu": gpu, "pricing": hourly[0]}
    raw = hourly[0].get("price")
    if not isinstance(raw, int) or isinstance(raw, bool):
        raise ParseError(f"OVH instance {code!r}: price is not an integer count of 1e-8 {currency}: {raw!r}")
    if raw <= 0 or hourly[0].get("interval", 1) != 1:
        yield Rejected("offers", (f"no_price: {raw!r} per {hourly[0].get('interval')} hour(s)",), row)
        return
    model = gpu.get("model")
    size = (gpu.get("memory") or {}).get("size")
    try:
        if not isinstance(model, str):
            raise LookupError(f"unknown_gpu: {model!r}")
        gpu_model = resolve(model, provider="ovh", memory_gb=float(size) if isinstance(size, int | float) and not isinstance(size, bool) else None)
    except LookupError as exc:
        yield Rejected("offers", (str(exc),), row)  # once per flavour, not per region
        return
    memory = (technical.get("memory") or {}).get("size")
    cores = (technical.get("cpu") or {}).get("cores")
    for region in regions.get(flavour) or ["global"]:
        yield Offer(
            offer_id=f"{code}/{region}",
            instance_type=flavour,
            region=region,
            market="on_demand",
            gpu_name=model,
            gpu_model=gpu_model,
            gpu_count=float(gpu["number"]),
            # gpu_memory_gb: the catalog's size is the card's GB class; the nameplate comes from gpu_models
            vcpus=float(cores) if cores else None,
            ram_gb=gb_from_gib(memory) if memory else None,
            price=raw / PRICE_SCALE,
            price_unit="instance_hour",
            currency=currency,
            availability="unknown",
        )


SOURCE = Source(
    name="ovh-catalog",
    provider="ovh",
    description="OVHcloud Public Cloud order catalog: GPU instance flavours, hourly EUR prices (1e-8 units)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    gpu_targets=GPU_TARGETS,
    docs_url="https://eu.api.ovh.com/console/?section=%2Forder&branch=v1#get-/order/catalog/public/cloud",
)
