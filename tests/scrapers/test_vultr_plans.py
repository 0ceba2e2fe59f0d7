from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import vultr_plans
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

PLANS = "vultr/vultr-plans/plans.json"
METAL = "vultr/vultr-plans/plans-metal.json"
PLANS_URL = "https://api.vultr.com/v2/plans?type=all&per_page=500"
METAL_URL = "https://api.vultr.com/v2/plans-metal?per_page=500"


def items():
    return parse_fixture("vultr-plans", PLANS, METAL)


def parsed(path, url):
    """The parser alone: independent of which canonical models the reference table has yet."""
    return parse_bytes("vultr-plans", fixture_path(path).read_bytes(), url=url)


def summary(records):
    return {
        o["offer_id"]: (o["gpu_model"], o["gpu_count"], o["gpu_memory_gb"], o["price"])
        for o in records
        if not isinstance(o, Rejected)
    }


def gpu_plan(**fields):
    plan = {
        "id": "vcg-l40s-16c-180g-48vram",
        "vcpu_count": 16,
        "ram": 184320,
        "disk": 1200,
        "bandwidth": 10240,
        "monthly_cost": 1220,
        "hourly_cost": 1.671,
        "type": "vcg",
        "locations": ["atl"],
        "gpu_vram_gb": 48,
        "gpu_type": "NVIDIA_L40S",
    }
    plan.update(fields)
    return plan


def plans_body(*plans):
    return json.dumps({"plans": list(plans), "meta": {"total": len(plans), "links": {"next": "", "prev": ""}}}).encode()


def test_whole_record_h100_bare_metal_on_demand():
    assert by_id(items())["vbm-112c-2048gb-8-h100-gpu/sea/on_demand"] == {
        "table": "offers",
        "provider": "vultr",
        "offer_id": "vbm-112c-2048gb-8-h100-gpu/sea/on_demand",
        "source": "vultr-plans",
        "instance_type": "vbm-112c-2048gb-8-h100-gpu",
        "region": "sea",
        "market": "on_demand",
        "tier": "bare_metal",
        "gpu_name": "vbm-112c-2048gb-8-h100-gpu",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 224.0,
        "ram_gb": 2199.023,  # 2,097,152 MiB
        "price": 23.92,
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 23.92,
        "usd_per_gpu_hour": 2.99,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": METAL_URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 13, tzinfo=UTC),
    }


def test_preemptible_bare_metal_prices_are_spot_offers():
    ids = by_id(items())
    assert (ids["vbm-112c-2048gb-8-h100-gpu/sea/spot"]["usd_per_hour"], ids["vbm-112c-2048gb-8-h100-gpu/sea/spot"]["usd_per_gpu_hour"]) == (18.4, 2.3)
    assert ids["vbm-256c-2048gb-8-mi300x-gpu/ord/spot"]["price"] == 14.72


def test_bare_metal_plans():
    assert summary(parsed(METAL, METAL_URL)) == {
        "vbm-256c-2048gb-8-mi300x-gpu/ord/on_demand": ("MI300X", 8.0, 192.0, 17.52),
        "vbm-256c-2048gb-8-mi300x-gpu/ord/spot": ("MI300X", 8.0, 192.0, 14.72),
        "vbm-112c-2048gb-8-h100-gpu/sea/on_demand": ("H100-SXM", 8.0, 80.0, 23.92),
        "vbm-112c-2048gb-8-h100-gpu/sea/spot": ("H100-SXM", 8.0, 80.0, 18.4),
        # deploy_ondemand false: the listed 15.60 cannot be deployed, only the preemptible price.
        "vbm-112c-2048gb-8-a100-gpu/ewr/spot": ("A100-SXM4-80GB", 8.0, 80.0, 12.0),
        # No preemptible market: only on-demand.
        "vbm-72c-480gb-gh200-gpu/ewr/on_demand": ("GH200", 1.0, 96.0, 2.99),
        "vbm-64c-2048gb-8-l40-gpu/ord/on_demand": ("L40S", 8.0, 48.0, 14.0),
    }
    assert rejected(parsed(METAL, METAL_URL)) == []


def test_cloud_gpu_plans_keep_vgpu_slices_fractional():
    assert summary(parsed(PLANS, PLANS_URL)) == {
        # gpu_count "1/8" as Vultr states it; the slice's 2 GB is the memory the offer exposes.
        "vcg-a16-2c-8g-2vram/ewr/on_demand": ("A16", 0.125, 2.0, 0.059),
        "vcg-a16-2c-8g-2vram/fra/on_demand": ("A16", 0.125, 2.0, 0.059),
        "vcg-a16-2c-8g-2vram/sjc/on_demand": ("A16", 0.125, 2.0, 0.059),
        # No gpu_count: 16 GB of a 48 GB A40 is a third of the card.
        "vcg-a40-8c-40g-16vram/ewr/on_demand": ("A40", 0.333333, 16.0, 0.879),
        "vcg-a16-6c-64g-16vram/ewr/on_demand": ("A16", 1.0, 16.0, 0.58),
        "vcg-a16-6c-64g-16vram/ord/on_demand": ("A16", 1.0, 16.0, 0.58),
        # location_cost overrides the plan price in ewr.
        "vcg-l40s-16c-180g-48vram/atl/on_demand": ("L40S", 1.0, 48.0, 1.671),
        "vcg-l40s-16c-180g-48vram/ewr/on_demand": ("L40S", 1.0, 48.0, 1.9),
        "vcg-b200-248c-2826g-1536vram/sea/on_demand": ("B200", 8.0, 192.0, 79.92),
        # 4 GB of an 80 GB A100 whose form factor Vultr does not name: a twentieth of the stand-in.
        "vcg-a100-1c-6g-4vram/ewr/on_demand": ("A100-80GB-AnyForm", 0.05, 4.0, 0.123),
    }


def test_slice_prices_scale_to_a_whole_gpu():
    a40 = by_id(items())["vcg-a40-8c-40g-16vram/ewr/on_demand"]
    assert (a40["usd_per_hour"], a40["usd_per_gpu_hour"], a40["interconnect"]) == (0.879, 2.637003, None)


def test_a100_slices_keep_their_share_and_claim_no_form_factor_because_vultr_names_none():
    """A vGPU slice of an A100 is not a whole HGX node, so SXM or PCIe is unknown: the offer is the
    stand-in A100-80GB-AnyForm (form factor "Unstated"), never counted as a whole GPU or as SXM."""
    a100 = by_id(items())["vcg-a100-1c-6g-4vram/ewr/on_demand"]
    assert (a100["gpu_model"], a100["gpu_count"], a100["gpu_memory_gb"], a100["usd_per_gpu_hour"], a100["interconnect"]) == (
        "A100-80GB-AnyForm", 0.05, 4.0, 2.46, None,
    )
    assert gpu_models()["A100-80GB-AnyForm"].form_factor == "Unstated"
    assert rejected(parsed(PLANS, PLANS_URL)) == []


def test_cpu_plans_free_plans_and_unlisted_plans_make_nothing():
    ids = {o["instance_type"] for o in parsed(PLANS, PLANS_URL) if not isinstance(o, Rejected)}
    assert not ids & {"vc2-1c-0.5gb-free", "vc2-1c-1gb", "vhf-2c-4gb", "vcg-a40-24c-120g-48vram"}


@pytest.mark.parametrize(
    ("plan", "reasons"),
    [
        (gpu_plan(hourly_cost=0, monthly_cost=0), ("no_price: vcg-l40s-16c-180g-48vram has no positive hourly price",)),
        (gpu_plan(gpu_type="NVIDIA_RTX_PRO_6000"), ("unknown_gpu: 'NVIDIA_RTX_PRO_6000'",)),
    ],
    ids=["zero-price", "unknown-gpu"],
)
def test_gpu_plan_traps_are_rejected(plan, reasons):
    [result] = parse_bytes("vultr-plans", plans_body(plan))
    assert isinstance(result, Rejected) and result.reasons == reasons


def test_an_unknown_bare_metal_gpu_plan_is_rejected_by_id():
    body = json.dumps({"plans_metal": [{"id": "vbm-256c-3072gb-8-mi355x-gpu", "cpu_threads": 256, "ram": 3145728, "hourly_cost": 20.0, "locations": ["ord"]}], "meta": {}}).encode()
    [result] = parse_bytes("vultr-plans", body)
    assert isinstance(result, Rejected) and result.reasons == ("unknown_gpu: 'vbm-256c-3072gb-8-mi355x-gpu'",)


def test_a_single_h100_cloud_plan_claims_no_form_factor():
    [on_demand] = parse_bytes("vultr-plans", plans_body(gpu_plan(gpu_type="NVIDIA_H100", gpu_vram_gb=80)))
    assert (on_demand["gpu_model"], on_demand["gpu_count"], on_demand["interconnect"]) == ("H100-80GB-AnyForm", 1.0, None)


def test_the_8_gpu_h100_cloud_plan_is_hgx():
    [on_demand] = parse_bytes("vultr-plans", plans_body(gpu_plan(id="vcg-h100-8", gpu_type="NVIDIA_H100", gpu_vram_gb=640, type="vdm")))
    assert (on_demand["gpu_model"], on_demand["gpu_count"], on_demand["interconnect"]) == ("H100-SXM", 8.0, "nvswitch")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (json.dumps({"data": []}).encode(), "neither a `plans` nor a `plans_metal` list"),
        (b'{"plans": [{"id": "vc2-1c-1gb"', "not JSON"),
    ],
    ids=["renamed-envelope", "truncated"],
)
def test_bad_bodies_fail_the_source(payload, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("vultr-plans", payload)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (plans_body({k: v for k, v in gpu_plan().items() if k != "hourly_cost"}), "malformed_record: missing field 'hourly_cost'"),
        (plans_body({k: v for k, v in gpu_plan(type="vdm").items() if k != "gpu_type"}), "malformed_record: missing field 'gpu_type'"),
        (plans_body(gpu_plan(gpu_count="one")), "malformed_record: ValueError: Invalid literal for Fraction: 'one'"),
    ],
    ids=["missing-price", "renamed-gpu-type", "bad-gpu-count"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("vultr-plans", body) == [(reason,)]


def test_fetch_follows_the_cursor_of_each_list(tmp_path):
    sent = []

    def handler(request):
        sent.append(str(request.url))
        if request.url.path == "/v2/plans" and "cursor" not in request.url.params:
            return httpx.Response(200, json={"plans": [], "meta": {"total": 2, "links": {"next": "bmV4dA==", "prev": ""}}})
        key = "plans" if request.url.path == "/v2/plans" else "plans_metal"
        return httpx.Response(200, json={key: [], "meta": {"total": 0, "links": {"next": "", "prev": ""}}})

    source = vultr_plans.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path)
    pages = list(vultr_plans.fetch(fetcher))
    assert sent == [PLANS_URL, PLANS_URL + "&cursor=bmV4dA%3D%3D", METAL_URL]
    assert len(pages) == 3
