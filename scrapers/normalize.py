"""Provider-neutral normalization between parsing and validation.

Parsers map their own GPU strings to canonical `gpu_model` names through reviewed tables in
their modules and quote prices as published (`price`, `price_unit`, `currency`). This step turns
that into the comparable columns: USD per hour for the whole offer and per GPU, and the GPU's
memory from the reference table when the provider does not state it. A GPU string that maps to
nothing becomes a rejected row with reason `unknown_gpu`, never a silent drop.

A price in another currency is converted with the latest loaded exchange rate of that currency
(`exchange_rates`, one `ExchangeRate` per currency); the offer keeps its own price and currency
and records the rate's date in `fx_rate_date`. With no rate for its currency an offer is
rejected as `no_exchange_rate`, never priced with a guess. A scraped storage price quoted in
another currency (`original_currency`, OVH's EUR) gets its `usd_per_gb_month` the same way, and
its evidence names the rate it was converted with.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from schemas.records import ExchangeRate, Offer, ParseItem, Rejected, ScrapedStorageTerm
from schemas.reference import gpu_models

ExchangeRates = Mapping[str, ExchangeRate]
"""The rate to convert each currency with, by ISO code (USD needs none)."""

NO_RATES: ExchangeRates = {}


def normalize(items: Iterable[ParseItem], rates: ExchangeRates = NO_RATES) -> Iterator[ParseItem]:
    for item in items:
        if isinstance(item, Offer):
            yield normalize_offer(item, rates)
        elif isinstance(item, ScrapedStorageTerm) and item.usd_per_gb_month is None and item.original_currency not in (None, "USD"):
            yield normalize_storage_term(item, rates)
        else:
            yield item


def normalize_offer(offer: Offer, rates: ExchangeRates = NO_RATES) -> Offer | Rejected:
    models = gpu_models()
    if offer.gpu_model is None or offer.gpu_model not in models:
        return Rejected("offers", (f"unknown_gpu: {offer.gpu_name!r}",), offer.as_row())
    if offer.currency == "USD":
        usd_per_unit, rate_date = 1.0, None
    elif offer.currency in rates:
        usd_per_unit, rate_date = rates[offer.currency].usd_per_unit, rates[offer.currency].rate_date
    else:
        return Rejected("offers", (f"no_exchange_rate: {offer.currency}",), offer.as_row())
    price, count = offer.price, offer.gpu_count
    if not isinstance(price, int | float) or not isinstance(count, int | float) or count <= 0:
        return Rejected("offers", ("price or gpu_count missing",), offer.as_row())
    usd = price * usd_per_unit
    per_instance = usd * count if offer.price_unit == "gpu_hour" else usd
    return replace(
        offer,
        usd_per_hour=round(per_instance, 6),
        usd_per_gpu_hour=round(per_instance / count, 6),
        gpu_memory_gb=offer.gpu_memory_gb if offer.gpu_memory_gb is not None else models[offer.gpu_model].memory_gb,
        fx_rate_date=rate_date,
    )


# usd_per_gb_month = original_price x this x USD per unit of the currency (730 h a month, GiB = 1.073741824 GB)
_TO_GB_MONTH = {"GB-month": 1.0, "GiB-month": 1 / 1.073741824, "GB-hour": 730.0, "GiB-hour": 730 / 1.073741824}


def normalize_storage_term(term: ScrapedStorageTerm, rates: ExchangeRates = NO_RATES) -> ScrapedStorageTerm | Rejected:
    rate = rates.get(term.original_currency)
    if rate is None:
        return Rejected(term.table, (f"no_exchange_rate: {term.original_currency}",), term.as_row())
    if term.original_unit not in _TO_GB_MONTH:
        return Rejected(term.table, (f"unexpected_unit: {term.original_unit!r}",), term.as_row())
    usd = term.original_price * _TO_GB_MONTH[term.original_unit] * rate.usd_per_unit
    quote = f"1 {rate.currency} = {rate.usd_per_unit:g} USD, rate of {rate.rate_date.isoformat()}"
    return replace(term, usd_per_gb_month=round(usd, 9), evidence=f'{term.evidence} || usd_per_gb_month: "{quote}" <{rate.source_url}>')


def latest_rates(items: Iterable[ParseItem]) -> dict[str, ExchangeRate]:
    """The newest rate of each currency among parsed records (other records are ignored)."""
    latest: dict[str, ExchangeRate] = {}
    for item in items:
        if isinstance(item, ExchangeRate) and (item.currency not in latest or item.rate_date > latest[item.currency].rate_date):
            latest[item.currency] = item
    return latest
