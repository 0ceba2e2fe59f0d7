"""ECB euro foreign exchange reference rates: the daily XML, as USD per unit of each currency.

The ECB publishes, for its latest working day, how many units of each currency one euro buys.
USD is among them, so every listed currency gets a USD rate: one euro is `rate(USD)` dollars and
one unit of X is `rate(USD) / rate(X)` dollars. Each rate keeps the ECB's own date, so an offer
converted with it can say which day's rate it used. The source runs in the first phase of a
refresh, so offers priced in euros are normalized with the rates the same run loaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import IO
from xml.etree import ElementTree

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import ExchangeRate, Page, ParseItem, Rejected
from gpucat.scrapers.base import Fetcher, Source

HOST = "www.ecb.europa.eu"
URL = f"https://{HOST}/stats/eurofxref/eurofxref-daily.xml"
_CUBE = "{http://www.ecb.int/vocabulary/2002-08-01/eurofxref}Cube"
_CURRENCY = re.compile(r"^[A-Z]{3}$")


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    try:
        root = ElementTree.fromstring(body.read())
    except ElementTree.ParseError as exc:
        raise ParseError(f"ECB reference rates are not XML: {exc}") from None
    days = [cube for cube in root.iter(_CUBE) if "time" in cube.attrib]
    if not days:
        raise ParseError("ECB reference rates: no <Cube time='…'> element")
    for day in days:
        yield from _rates(day)


def _rates(day: ElementTree.Element) -> Iterator[ParseItem]:
    rate_date = date.fromisoformat(day.attrib["time"])  # not a date: the frame fails the page, naming it
    per_euro: dict[str, float] = {}
    for cube in day.iter(_CUBE):
        if cube is day:
            continue
        currency, raw = cube.attrib.get("currency"), cube.attrib.get("rate")
        row = {"currency": currency, "rate": raw, "rate_date": rate_date.isoformat()}
        try:
            rate = float(raw) if raw is not None else None
        except ValueError:
            rate = None
        if currency is None or not _CURRENCY.match(currency):
            yield Rejected("exchange_rates", (f"bad_currency: {currency!r}",), row)
        elif rate is None or not rate > 0:
            yield Rejected("exchange_rates", (f"bad_rate: {raw!r}",), row)
        elif currency in per_euro:
            yield Rejected("exchange_rates", (f"duplicate_currency: {currency}",), row)
        else:
            per_euro[currency] = rate
    if not per_euro:
        raise ParseError(f"ECB reference rates: no rates listed for {rate_date}")
    usd_per_euro = per_euro.pop("USD", None)
    if usd_per_euro is None:
        raise ParseError(f"ECB reference rates: no USD rate for {rate_date}, nothing can be converted")
    yield ExchangeRate("EUR", usd_per_euro, rate_date)
    for currency, rate in per_euro.items():
        yield ExchangeRate(currency, usd_per_euro / rate, rate_date)


SOURCE = Source(
    name="ecb-rates",
    provider="ecb",
    description="ECB euro reference rates (daily XML), stored as USD per unit of each currency",
    tables=("exchange_rates",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    loads_first=True,
    docs_url="https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html",
)
