from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected, rejection_reasons

BODY = "tensordock/tensordock-terms/locations.json"
URL = "https://dashboard.tensordock.com/api/v2/locations"


def test_storage_price_per_location_and_gpu_host_per_gb_hour():
    items = parse_fixture("tensordock-terms", BODY)
    assert rejected(items) == []
    rows = offers(items)
    assert len(rows) == 8
    assert {(r["region"], r["product"]): (r["original_price"], r["usd_per_gb_month"]) for r in rows if r["region"].startswith("Helsinki")} == {
        ("Helsinki, Uusimaa, Finland", "VM storage (L40S PCIe 48GB hosts)"): (0.0001, 0.073),  # its own price, x 730 h
        ("Helsinki, Uusimaa, Finland", "VM storage (GeForce RTX 3080 PCIe 10GB hosts)"): (5e-05, 0.0365),
        ("Helsinki, Uusimaa, Finland", "VM storage (Tesla V100 SXM2 16GB hosts)"): (5e-05, 0.0365),
    }
    assert rows[0] == {
        "table": "scraped_storage_terms",
        "provider": "tensordock",
        "kind": "volume",
        "product": "VM storage (H100 SXM5 80GB hosts)",
        "region": "Austin, Texas, United States",
        "usd_per_gb_month": 0.0365,
        "original_currency": "USD",
        "original_price": 5e-05,
        "original_unit": "GB-hour",
        "max_size_gb": 1000.0,
        "read_throughput_mb_s": None,
        "source": "tensordock-terms",
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 30, 7, tzinfo=UTC),
        "verified_on": "2026-11-20",
        "evidence": (
            'usd_per_gb_month,original_price: "location 3f1c9a52-6b1e-4d8e-9a43-0c7e5d2b8f11 (Austin, Texas, United States), '
            f'h100-sxm5-80gb: pricing.per_gb_storage_hr 0.00005" <{URL}>'
            f' || max_size_gb: "h100-sxm5-80gb resources.max_storage_gb 1000" <{URL}>'
        ),
        "notes": "the VM's disk, per GB-hour (x 730 h a month); max_size_gb is the most one VM on these hosts may take",
    }


def _gpu(price) -> dict:
    return {"v0Name": "x", "displayName": "X", "pricing": {"per_gb_storage_hr": price}, "resources": {}}


@pytest.mark.parametrize("price", [0, None, "0.00005", True])
def test_a_placeholder_or_string_price_is_rejected(price):
    body = {"data": {"locations": [{"id": "l", "city": "C", "stateprovince": "", "country": "D", "gpus": [_gpu(price)]}]}}
    (item,) = parse_bytes("tensordock-terms", json.dumps(body).encode())
    assert item.reasons[0].startswith("no_price")


@pytest.mark.parametrize("body", [b'{"data": {}}', b"[]", b"nope"])
def test_a_payload_in_the_wrong_shape_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("tensordock-terms", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"data": {"locations": [{"id": "l", "gpus": []}]}}).encode(), "malformed_record: missing field 'city'"),
    ],
    ids=["missing-city"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("tensordock-terms", body) == [(reason,)]
