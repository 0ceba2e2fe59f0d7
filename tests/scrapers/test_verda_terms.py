from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected, rejection_reasons

BODY = "verda/verda-terms/volume-types.json"
URL = "https://api.datacrunch.io/v1/volume-types?currency=usd"


def test_volume_types_become_gb_month_prices():
    items = parse_fixture("verda-terms", BODY)
    rows = offers(items)
    assert [(r["kind"], r["product"], r["usd_per_gb_month"]) for r in rows] == [
        ("block", "NVMe volume", 0.2),
        ("block", "HDD volume", 0.05),
        ("network_volume", "NVMe_Shared volume", 0.2),  # is_shared_fs
    ]
    assert rows[1] == {
        "table": "scraped_storage_terms",
        "provider": "verda",
        "kind": "block",
        "product": "HDD volume",
        "region": "global",
        "usd_per_gb_month": 0.05,
        "original_currency": "USD",
        "original_price": 0.05,
        "original_unit": "GB-month",
        "max_size_gb": None,
        "read_throughput_mb_s": None,
        "source": "verda-terms",
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 30, 11, tzinfo=UTC),
        "verified_on": "2026-11-20",
        "evidence": f'usd_per_gb_month,original_price: "type HDD: price_per_month_per_gb 0.05, currency usd" <{URL}>',
        "notes": "one price for every location (the list names none)",
    }
    assert [(r.row["type"], r.reasons[0].split(":")[0]) for r in rejected(items)] == [("HDD_Shared", "ambiguous_price"), ("NVMe_Local", "no_price")]


@pytest.mark.parametrize(
    ("price", "reason"),
    [
        ({"price_per_month_per_gb": 0.2, "cps_per_gb": 0.2 / 2628000, "currency": "eur"}, "unexpected_currency"),  # EUR is not USD
        ({"price_per_month_per_gb": "0.2", "currency": "usd"}, "no_price"),
        ({"price_per_month_per_gb": 0.2, "cps_per_gb": 0.2 / 3600, "currency": "usd"}, "ambiguous_price"),  # per hour, not per second
    ],
)
def test_traps_are_rejected(price, reason):
    (item,) = parse_bytes("verda-terms", json.dumps([{"type": "NVMe", "price": price}]).encode())
    assert item.reasons[0].startswith(reason)


@pytest.mark.parametrize("body", [b"{}", b"[]", b"nope"])
def test_a_payload_in_the_wrong_shape_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("verda-terms", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps([{"type": "NVMe"}]).encode(), "malformed_record: missing field 'price'"),
    ],
    ids=["missing-price"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("verda-terms", body) == [(reason,)]
