from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import ExchangeRate
from tests.scrapers.helpers import normalize_bytes, offers, parse_bytes, parse_fixture, rejected

BODY = "ovh/ovh-terms/catalog-fr.json"
URL = "https://eu.api.ovh.com/1.0/order/catalog/public/cloud?ovhSubsidiary=FR"
ECB = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
RATE = ExchangeRate("EUR", 1.05, date(2026, 11, 19), "ecb-rates", ECB, datetime(2026, 11, 19, 16, tzinfo=UTC))  # the day before the body was fetched


def test_volume_addons_keep_their_eur_price_until_normalization_converts_it():
    (raw,) = parse_bytes("ovh-terms", (open("fixtures/" + BODY, "rb")).read(), url=URL)
    assert raw["usd_per_gb_month"] is None and (raw["original_currency"], raw["original_price"], raw["original_unit"]) == ("EUR", 5.48e-05, "GiB-hour")
    (row,) = normalize_bytes("ovh-terms", open("fixtures/" + BODY, "rb").read(), url=URL, rates={"EUR": RATE})
    assert row == {
        **raw,
        "usd_per_gb_month": 0.03911946,  # 0.0000548 EUR x 730 h / 1.073741824 x 1.05 USD per EUR
        "evidence": raw["evidence"] + f' || usd_per_gb_month: "1 EUR = 1.05 USD, rate of 2026-11-19" <{ECB}>',
    }
    assert raw["evidence"] == (
        'original_price: "planCode volume.classic.consumption, Classic volume per GiB per hour: price 5480 '
        f'(1e-8 EUR, tax 1096) per 1 hour" <{URL}>'
    )
    assert (raw["product"], raw["kind"], raw["region"]) == ("Block Storage classic", "block", "global")


def test_without_a_rate_the_row_is_rejected_not_read_as_usd():
    (item,) = normalize_bytes("ovh-terms", open("fixtures/" + BODY, "rb").read(), url=URL)
    assert item.reasons == ("no_exchange_rate: EUR",)


def test_the_fixture_converts_with_the_fixtures_own_rate():
    items = parse_fixture("ovh-terms", BODY)
    assert rejected(items) == [] and [r["usd_per_gb_month"] > 0 for r in offers(items)] == [True]


def _catalog(pricings: list[dict]) -> bytes:
    addon = {"planCode": "volume.x.consumption", "invoiceName": "volume.x", "pricings": pricings}
    plans = [{"planCode": "project", "addonFamilies": [{"name": "volume", "addons": ["volume.x.consumption"]}]}]
    return json.dumps({"locale": {"currencyCode": "EUR"}, "plans": plans, "addons": [addon]}).encode()


HOUR = {"capacities": ["consumption"], "intervalUnit": "hour", "interval": 1}


@pytest.mark.parametrize(
    ("pricings", "reason"),
    [
        ([{**HOUR, "price": 0}], "no_price"),
        ([{**HOUR, "intervalUnit": "month", "price": 4000000}], "unexpected_price_dimension"),  # monthly only
        ([{**HOUR, "interval": 730, "price": 4000000}], "unexpected_price_dimension"),
    ],
)
def test_odd_pricings_are_rejected(pricings, reason):
    (item,) = parse_bytes("ovh-terms", _catalog(pricings))
    assert item.reasons[0].startswith(reason)


@pytest.mark.parametrize(
    "body",
    [b"{}", b"[]", json.dumps({"locale": {"currencyCode": "EUR"}, "plans": [], "addons": []}).encode(), _catalog([{**HOUR, "price": "0.04"}])],
)
def test_a_catalog_in_the_wrong_shape_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("ovh-terms", body)
