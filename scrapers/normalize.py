"""Provider-neutral normalization between parsing and validation.

Parsers map their own GPU strings to canonical `gpu_model` names through reviewed tables in
their modules and quote prices as published (`price`, `price_unit`, `currency`). This step turns
that into the comparable columns: USD per hour for the whole offer and per GPU, and the GPU's
memory from the reference table when the provider does not state it. A GPU string that maps to
nothing becomes a rejected row with reason `unknown_gpu`, never a silent drop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from schemas.records import Offer, ParseItem, Rejected
from schemas.reference import gpu_models

# Until the scraped exchange-rate table lands, only USD quotes can be converted.
DEFAULT_USD_RATES: Mapping[str, float] = {"USD": 1.0}


def normalize(items: Iterable[ParseItem], usd_per_unit: Mapping[str, float] = DEFAULT_USD_RATES) -> Iterator[ParseItem]:
    for item in items:
        yield normalize_offer(item, usd_per_unit) if isinstance(item, Offer) else item


def normalize_offer(offer: Offer, usd_per_unit: Mapping[str, float] = DEFAULT_USD_RATES) -> Offer | Rejected:
    models = gpu_models()
    if offer.gpu_model is None or offer.gpu_model not in models:
        return Rejected("offers", (f"unknown_gpu: {offer.gpu_name!r}",), offer.as_row())
    rate = usd_per_unit.get(offer.currency or "")
    if rate is None:
        return Rejected("offers", (f"unsupported_currency: {offer.currency!r}",), offer.as_row())
    price, count = offer.price, offer.gpu_count
    if not isinstance(price, int | float) or not isinstance(count, int | float) or count <= 0:
        return Rejected("offers", ("price or gpu_count missing",), offer.as_row())
    usd = price * rate
    per_instance = usd * count if offer.price_unit == "gpu_hour" else usd
    return replace(
        offer,
        usd_per_hour=round(per_instance, 6),
        usd_per_gpu_hour=round(per_instance / count, 6),
        gpu_memory_gb=offer.gpu_memory_gb if offer.gpu_memory_gb is not None else models[offer.gpu_model].memory_gb,
    )
