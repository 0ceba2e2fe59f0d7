from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected, rejection_reasons

PAGE = "gcp/gcp-terms/skus-page-2.json"
URL = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?currencyCode=USD&pageSize=5000&key=REDACTED&pageToken=CiQ2RjgxLTU4NDQtNDU2QS9za3VzLzdGMjAtQjZFMS00Qzkz"
AT = datetime(2026, 11, 20, 6, 30, 3, tzinfo=UTC)


def test_disk_skus_become_gb_month_prices_per_region():
    items = parse_fixture("gcp-terms", PAGE)
    rows = [r for r in offers(items) if r["table"] == "scraped_storage_terms"]
    assert [(r["product"], r["region"], r["usd_per_gb_month"], r["original_price"]) for r in rows] == [
        ("pd-standard", "us-central1", 0.037252903, 0.04),  # 0.04 per GiB-month / 1.073741824
        ("pd-standard", "us-east1", 0.037252903, 0.04),
        ("pd-standard", "us-west1", 0.037252903, 0.04),
        ("pd-balanced", "us-central1", 0.093132257, 0.1),
        ("pd-balanced", "us-east1", 0.093132257, 0.1),
        ("pd-balanced", "us-west1", 0.093132257, 0.1),
        ("pd-ssd", "us-central1", 0.158324838, 0.17),
        ("pd-ssd", "us-east1", 0.158324838, 0.17),
        ("pd-ssd", "us-west1", 0.158324838, 0.17),
        ("pd-standard", "europe-west3", 0.044703484, 0.048),  # "Storage PD Capacity in Frankfurt"
    ]
    assert rows[3] == {
        "table": "scraped_storage_terms",
        "provider": "gcp",
        "kind": "block",
        "product": "pd-balanced",
        "region": "us-central1",
        "usd_per_gb_month": 0.093132257,
        "original_currency": "USD",
        "original_price": 0.1,
        "original_unit": "GiB-month",
        "max_size_gb": None,
        "read_throughput_mb_s": None,
        "source": "gcp-terms",
        "source_url": URL,
        "scraped_at": AT,
        "verified_on": "2026-11-20",
        "evidence": f'usd_per_gb_month,original_price: "SKU 9B8E-4A7C-2F19, Balanced PD Capacity: 0.1 USD per gibibyte month (GiBy.mo)" <{URL}>',
        "notes": "zonal persistent disk, priced per GiB-month provisioned",
    }


def test_premium_egress_to_the_same_continent_becomes_gb_tiers():
    rows = [r for r in offers(parse_fixture("gcp-terms", PAGE)) if r["table"] == "scraped_egress_terms"]
    central = [r for r in rows if r["region"] == "us-central1"]
    assert {r["region"] for r in rows} == {"us-central1", "us-east1", "us-west1"} and len(rows) == 9
    assert [(r["tier"], r["from_gb"], r["to_gb"], r["usd_per_gb"], r["original_price"]) for r in central] == [
        (1, 0.0, 1099.511628, 0.111758709, 0.12),  # 0-1024 GiB at 0.12 per GiB
        (2, 1099.511628, 10995.116278, 0.102445483, 0.11),
        (3, 10995.116278, None, 0.074505806, 0.08),
    ]
    assert central[0]["evidence"] == (
        'from_gb,to_gb,usd_per_gb,original_price: "SKU 984A-1F56-D5F6, Network Internet Egress from Americas to Americas, '
        f'tier from 0 GiB to 1024 GiB: 0.12 USD per gibibyte" <{URL}>'
    )
    assert all(r["original_unit"] == "GiB" and r["free_allowance_gb_month"] is None for r in rows)


def test_the_traps_are_rejected_not_read():
    assert [(r.table, r.reasons[0].split(":")[0], r.row["skuId"]) for r in rejected(parse_fixture("gcp-terms", PAGE))] == [
        ("scraped_storage_terms", "no_price", "7A41-C2D8-0E95"),  # proto3 zero: no units, no nanos
        ("scraped_storage_terms", "unexpected_price_dimension", "6C92-0D4B-E1F3"),  # GiBy, not GiBy.mo
        ("scraped_egress_terms", "unexpected_price_dimension", "4B7E-9D21-C0A8"),  # first tier not at 0
    ]


def _sku(**changes) -> dict:
    sku = next(s for s in json.loads(open("fixtures/" + PAGE).read())["skus"] if s["description"] == "Balanced PD Capacity")
    sku.update(changes)
    return sku


@pytest.mark.parametrize(
    ("sku", "reason"),
    [
        (_sku(serviceRegions=[]), "no_region"),
        (_sku(pricingInfo=[{"pricingExpression": {**_sku()["pricingInfo"][0]["pricingExpression"], "tieredRates": [
            {"startUsageAmount": 0, "unitPrice": {"currencyCode": "EUR", "units": "0", "nanos": 90000000}}]}}]), "unexpected_price_dimension"),
    ],
)
def test_bad_disk_skus_are_rejected(sku, reason):
    (item,) = parse_bytes("gcp-terms", json.dumps({"skus": [sku]}).encode())
    assert item.reasons[0].startswith(reason)


@pytest.mark.parametrize("body", [b"[]", b'{"skus": "none"}', b"not json"])
def test_a_page_in_the_wrong_shape_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("gcp-terms", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"skus": [{"skuId": "X", "description": "Balanced PD Capacity"}]}).encode(), "malformed_record: missing field 'category'"),
    ],
    ids=["missing-category"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("gcp-terms", body) == [(reason,)]
