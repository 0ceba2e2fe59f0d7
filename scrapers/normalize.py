"""Provider-neutral normalization between parsing and validation.

Parsers map their own GPU strings to canonical `gpu_model` names through reviewed tables in
their modules and quote prices as published (`price`, `price_unit`, `currency`). This step turns
that into the comparable columns: USD per hour for the whole offer and per GPU, and the GPU's
memory from the reference table when the provider does not state it. A GPU string a parser's
table does not map goes through the shared catalog rules (`scrapers._gpus.resolve`, with the
memory the offer states); one they cannot settle becomes a rejected row with their reason
(`unknown_gpu`, `ambiguous_gpu`, `mig_slice`, ...), never a silent drop.

A price in another currency is converted with the rate of the offer's own day (its `scraped_at`
date, UTC), or the nearest earlier day a rate was published for: a publisher skips weekends and
holidays, and a rate from after the offer was seen is not the one it was priced against. The
offer keeps its own price and currency and records the rate's date in `fx_rate_date`. With no
rate on or before its day an offer is rejected as `no_exchange_rate`, and when the nearest rate
is more than `MAX_RATE_AGE_DAYS` older than the offer as `stale_exchange_rate`: never priced
with a guess, nor silently with a rate of another year.
A scraped storage price quoted in another currency (`original_currency`, OVH's EUR) gets its
`usd_per_gb_month` by the same rule, and its evidence names the rate it was converted with.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, date

from gpucat.schemas.records import ExchangeRate, Offer, ParseItem, Rejected, ScrapedStorageTerm
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers._gpus import resolve

ExchangeRates = Mapping[str, ExchangeRate | Sequence[ExchangeRate]]
"""The rates each currency may be converted with, by ISO code (USD needs none): one rate, or
several days of them in any order; each offer takes the one of its day (see `rate_for`)."""

NO_RATES: ExchangeRates = {}
# ECB publishes every working day; its longest gap (Christmas to the first working day of January)
# is under a week, so a rate older than this means the rates source stopped, not a holiday.
MAX_RATE_AGE_DAYS = 7


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
    if offer.gpu_model is None and offer.gpu_name:
        try:
            offer = replace(offer, gpu_model=resolve(offer.gpu_name, provider=offer.provider, memory_gb=offer.gpu_memory_gb))
        except LookupError as exc:
            return Rejected("offers", (str(exc),), offer.as_row())
    if offer.gpu_model is None or offer.gpu_model not in models:
        return Rejected("offers", (f"unknown_gpu: {offer.gpu_name!r}",), offer.as_row())
    if offer.currency == "USD":
        usd_per_unit, rate_date = 1.0, None
    else:
        rate = rate_for(rates, offer.currency, offer.scraped_at.astimezone(UTC).date())
        if isinstance(rate, str):
            return Rejected("offers", (rate,), offer.as_row())
        usd_per_unit, rate_date = rate.usd_per_unit, rate.rate_date
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


def rate_for(rates: ExchangeRates, currency: str, day: date) -> ExchangeRate | str:
    """The rate of `day`, else of the nearest earlier day; or the rejection reason when there is none fit to use."""
    held = rates.get(currency)
    history = (held,) if isinstance(held, ExchangeRate) else tuple(held or ())
    earlier = [r for r in history if r.rate_date <= day]
    if not earlier:
        return f"no_exchange_rate: {currency}" if not history else f"no_exchange_rate: {currency} has no rate on or before {day}"
    nearest = max(earlier, key=lambda r: (r.rate_date, r.scraped_at))
    age = (day - nearest.rate_date).days
    if age > MAX_RATE_AGE_DAYS:
        return f"stale_exchange_rate: {currency} rate of {nearest.rate_date} is {age} days older than the offer ({day}); limit {MAX_RATE_AGE_DAYS}"
    return nearest


def rates_by_currency(items: Iterable[ParseItem]) -> dict[str, tuple[ExchangeRate, ...]]:
    """Every parsed rate, grouped by currency (other records are ignored)."""
    out: dict[str, list[ExchangeRate]] = {}
    for item in items:
        if isinstance(item, ExchangeRate):
            out.setdefault(item.currency, []).append(item)
    return {c: tuple(sorted(rs, key=lambda r: r.rate_date)) for c, rs in out.items()}


# usd_per_gb_month = original_price x this x USD per unit of the currency (730 h a month, GiB = 1.073741824 GB)
_TO_GB_MONTH = {"GB-month": 1.0, "GiB-month": 1 / 1.073741824, "GB-hour": 730.0, "GiB-hour": 730 / 1.073741824}


def normalize_storage_term(term: ScrapedStorageTerm, rates: ExchangeRates = NO_RATES) -> ScrapedStorageTerm | Rejected:
    rate = rate_for(rates, term.original_currency, term.scraped_at.astimezone(UTC).date())
    if isinstance(rate, str):
        return Rejected(term.table, (rate,), term.as_row())
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
