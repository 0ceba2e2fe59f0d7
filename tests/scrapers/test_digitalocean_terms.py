from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected, rejection_reasons

PAGES = ("digitalocean/digitalocean-terms/sizes-page-1.json", "digitalocean/digitalocean-terms/sizes-page-2.json")
URL = "https://api.digitalocean.com/v2/sizes?per_page=200"
PRICING = "https://www.digitalocean.com/pricing"


def test_each_gpu_size_states_its_included_transfer_in_gb():
    items = parse_fixture("digitalocean-terms", *PAGES)
    assert rejected(items) == []
    rows = offers(items)
    assert {r["region"]: r["free_allowance_gb_month"] for r in rows} == {
        "gpu-4000adax1-20gb": 10737.41824,  # 10 TB = 10,000 GiB
        "gpu-6000adax1-48gb": 10737.41824,
        "gpu-l40sx1-48gb": 10737.41824,
        "gpu-h100x1-80gb": 16106.12736,
        "gpu-h100x8-640gb": 64424.50944,
        "gpu-h200x8-1128gb": 64424.50944,  # unavailable, still priced
        "gpu-mi300x1-192gb": 16106.12736,
        "gpu-mi300x8-1536gb": 64424.50944,
        "gpu-a16x1-16gb": 5368.70912,
        "gpu-l40sx8-384gb": 64424.50944,
    }  # the CPU sizes are not GPU Droplets
    assert rows[3] == {
        "table": "scraped_egress_terms",
        "provider": "digitalocean",
        "scope": "internet",
        "region": "gpu-h100x1-80gb",
        "tier": 1,
        "from_gb": 0.0,
        "to_gb": 16106.12736,
        "usd_per_gb": 0.0,
        "original_price": 0.0,
        "original_unit": "GiB",
        "free_allowance_gb_month": 16106.12736,
        "source": "digitalocean-terms",
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 30, 13, tzinfo=UTC),
        "verified_on": "2026-11-20",
        "evidence": (
            f'from_gb,to_gb,usd_per_gb,original_price,free_allowance_gb_month: "size gpu-h100x1-80gb: transfer 15" <{URL}>'
            f' || to_gb,free_allowance_gb_month: "Droplets include free outbound data transfer, starting at 500 GiB / mo" <{PRICING}>'
        ),
        "notes": "included outbound transfer of one gpu-h100x1-80gb Droplet, pooled per team: 15 TB = 15000 GiB; overage per the reviewed egress row",
    }


@pytest.mark.parametrize("transfer", [0, None, "15", True, -1])
def test_a_gpu_size_without_a_positive_transfer_is_rejected(transfer):
    body = {"sizes": [{"slug": "gpu-x", "transfer": transfer, "gpu_info": {"count": 1}}]}
    (item,) = parse_bytes("digitalocean-terms", json.dumps(body).encode())
    assert item.reasons[0].startswith("no_allowance") and item.row["slug"] == "gpu-x"


@pytest.mark.parametrize("body", [b"[]", b'{"sizes": {}}', b"nope"])
def test_a_payload_in_the_wrong_shape_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("digitalocean-terms", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"sizes": [{"gpu_info": {"count": 1}}]}).encode(), "malformed_record: missing field 'transfer'"),
    ],
    ids=["missing-transfer"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("digitalocean-terms", body) == [(reason,)]
