"""Provider-neutral normalization between parsing and validation.

Parsers map their own GPU strings to canonical `gpu_model` names through reviewed tables in
their modules and quote prices as published (`price`, `price_unit`, `currency`). This step turns
that into the comparable columns: USD per hour for the whole offer and per GPU, and the GPU's
memory from the reference table when the provider does not state it. A GPU string that maps to
nothing becomes a rejected row with reason `unknown_gpu`, never a silent drop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from scrapers.base import ParseItem, Rejected
from warehouse.reference import gpu_models

# Until the scraped exchange-rate table lands, only USD quotes can be converted.
DEFAULT_USD_RATES: Mapping[str, float] = {"USD": 1.0}


def normalize(items: Iterable[ParseItem], usd_per_unit: Mapping[str, float] = DEFAULT_USD_RATES) -> Iterator[ParseItem]:
    for item in items:
        if isinstance(item, Rejected) or item.get("table") != "offers":
            yield item
        else:
            yield normalize_offer(item, usd_per_unit)


def normalize_offer(offer: dict, usd_per_unit: Mapping[str, float] = DEFAULT_USD_RATES) -> ParseItem:
    models = gpu_models()
    model = offer.get("gpu_model")
    if model is None or model not in models:
        return Rejected("offers", (f"unknown_gpu: {offer.get('gpu_name')!r}",), _without_table(offer))
    rate = usd_per_unit.get(offer.get("currency") or "")
    if rate is None:
        return Rejected("offers", (f"unsupported_currency: {offer.get('currency')!r}",), _without_table(offer))
    price, count = offer.get("price"), offer.get("gpu_count")
    if not isinstance(price, int | float) or not isinstance(count, int | float) or count <= 0:
        return Rejected("offers", ("price or gpu_count missing",), _without_table(offer))
    usd = price * rate
    per_instance = usd * count if offer["price_unit"] == "gpu_hour" else usd
    out = dict(offer)
    out["usd_per_hour"] = round(per_instance, 6)
    out["usd_per_gpu_hour"] = round(per_instance / count, 6)
    if out.get("gpu_memory_gb") is None:
        out["gpu_memory_gb"] = models[model].memory_gb
    return out


def _without_table(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "table"}
