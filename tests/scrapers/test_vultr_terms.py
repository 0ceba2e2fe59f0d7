from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected, rejection_reasons

PLANS, METAL = "vultr/vultr-terms/plans.json", "vultr/vultr-terms/plans-metal.json"
URL = "https://api.vultr.com/v2/plans-metal?per_page=500"


def test_each_gpu_plan_states_its_bandwidth_quota():
    items = parse_fixture("vultr-terms", PLANS, METAL)
    assert rejected(items) == []
    rows = offers(items)
    assert {r["region"]: r["free_allowance_gb_month"] for r in rows} == {
        "vcg-a16-2c-8g-2vram": 800.0,
        "vcg-a40-8c-40g-16vram": 3072.0,
        "vcg-a100-1c-6g-4vram": 1024.0,
        "vcg-a16-6c-64g-16vram": 5120.0,  # a whole-GPU `vdm` plan
        "vcg-l40s-16c-180g-48vram": 10240.0,
        "vcg-b200-248c-2826g-1536vram": 20480.0,
        "vcg-a40-24c-120g-48vram": 10240.0,  # no locations, still a quota
        "vbm-256c-2048gb-8-mi300x-gpu": 10240.0,  # bare metal: no gpu_type, the id names the GPU
        "vbm-112c-2048gb-8-h100-gpu": 15360.0,
        "vbm-112c-2048gb-8-a100-gpu": 15360.0,
        "vbm-72c-480gb-gh200-gpu": 5120.0,
        "vbm-64c-2048gb-8-l40-gpu": 10240.0,
    }  # vc2/vhf and vbm-4c-32gb CPU plans are skipped
    assert next(r for r in rows if r["region"] == "vbm-112c-2048gb-8-h100-gpu") == {
        "table": "scraped_egress_terms",
        "provider": "vultr",
        "scope": "internet",
        "region": "vbm-112c-2048gb-8-h100-gpu",
        "tier": 1,
        "from_gb": 0.0,
        "to_gb": 15360.0,
        "usd_per_gb": 0.0,
        "original_price": 0.0,
        "original_unit": "GB",
        "free_allowance_gb_month": 15360.0,
        "source": "vultr-terms",
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 30, 16, tzinfo=UTC),
        "verified_on": "2026-11-20",
        "evidence": f'from_gb,to_gb,usd_per_gb,original_price,free_allowance_gb_month: "plan vbm-112c-2048gb-8-h100-gpu: bandwidth 15360" <{URL}>',
        "notes": "the plan's monthly bandwidth quota in GB; overage is not in the API",
    }


@pytest.mark.parametrize("bandwidth", [0, None, "1024", False])
def test_a_gpu_plan_without_a_positive_quota_is_rejected(bandwidth):
    (item,) = parse_bytes("vultr-terms", json.dumps({"plans": [{"id": "vcg-x", "gpu_type": "NVIDIA_A16", "bandwidth": bandwidth}]}).encode())
    assert item.reasons[0].startswith("no_allowance")


@pytest.mark.parametrize("body", [b"[]", b'{"plans": {}}', b"nope"])
def test_a_payload_in_the_wrong_shape_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("vultr-terms", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"plans": [{"gpu_type": "NVIDIA_A16"}]}).encode(), "malformed_record: missing field 'bandwidth'"),
    ],
    ids=["missing-bandwidth"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("vultr-terms", body) == [(reason,)]
