from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import cloudrift
from tests.conftest import FIXTURES
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

FILE = "cloudrift/cloudrift/instance-types.json"
URL = "https://api.cloudrift.ai/api/v1/instance-types/list"


def items():
    return parse_fixture("cloudrift", FILE)


def test_whole_record_rtx_pro_6000_in_texas():
    assert by_id(items())["rtxpro6000-24c-nr.1/ustx1a_a01"] == {
        "table": "offers",
        "provider": "cloudrift",
        "offer_id": "rtxpro6000-24c-nr.1/ustx1a_a01",
        "source": "cloudrift",
        "instance_type": "rtxpro6000-24c-nr.1",
        "region": "ustx1a_a01",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "RTX PRO 6000",
        "gpu_model": "RTX-PRO-6000-AnyEdition",
        "gpu_count": 1.0,
        "gpu_memory_gb": 96.0,
        "vcpus": 24.0,
        "ram_gb": 137.439,  # 128 GiB in bytes
        "price": 1.39,  # 139 cents
        "price_unit": "instance_hour",
        "currency": "USD",
        "usd_per_hour": 1.39,
        "usd_per_gpu_hour": 1.39,
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "unavailable",  # 0 free nodes there
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 22, tzinfo=UTC),
    }


def test_cents_per_variant_and_free_nodes_per_datacenter():
    ids = by_id(items())
    two = ids["rtx59-32c-nr.2/usny01_a01"]
    assert (two["gpu_count"], two["usd_per_hour"], two["usd_per_gpu_hour"]) == (2.0, 1.3, 0.65)
    assert ids["rtx59-16c-nr.1/ustx1a_a01"]["availability"] == "available"
    assert ids["rtx59-16c-nr.1/usny01_a01"]["availability"] == "unavailable"
    assert len(offers(items())) == 9


def test_unmapped_brand_and_a_type_in_no_datacenter_are_rejected():
    assert sorted((r.reasons[0], r.row["name"]) for r in rejected(items())) == [
        ("no_datacenter: the variant is listed in no datacenter", "mi350x-32c-nr.1"),
    ]
    # 16 GiB per GPU settles the V100's memory, not SXM2 or PCIe, and CloudRift says neither: the stand-in
    v100 = by_id(items())["v100-8c-nr.1/usny01_a01"]
    assert (v100["gpu_model"], v100["gpu_count"], v100["gpu_memory_gb"]) == ("V100-16GB-AnyForm", 1.0, 16.0)


def answer(**variant_changes) -> bytes:
    body = json.loads((FIXTURES / FILE).read_text())
    kind = body["data"]["instance_types"][0]
    kind["variants"] = [{**kind["variants"][0], **variant_changes}]
    body["data"]["instance_types"] = [kind]
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"cost_per_hour": 0}, "no_price: cost_per_hour 0"),
        ({"cost_per_hour": None}, "no_price: cost_per_hour None"),
        ({"cost_per_hour": "65"}, "no_price: cost_per_hour '65'"),
    ],
    ids=["placeholder-zero", "null-price", "price-as-string"],
)
def test_untrustworthy_prices_are_rejected(changes, reason):
    [item] = parse_bytes("cloudrift", answer(**changes), URL)
    assert isinstance(item, Rejected) and item.reasons == (reason,)


def test_the_spec_field_serves_when_the_older_one_is_missing():
    body = json.loads(answer())
    variant = body["data"]["instance_types"][0]["variants"][0]
    del variant["nodes_per_dc"]
    result = parse_bytes("cloudrift", json.dumps(body).encode(), URL)
    assert sorted(o["region"] for o in result) == ["usny01_a01", "ustx1a_a01"]


def renamed_nodes() -> bytes:
    body = json.loads(answer())
    variant = body["data"]["instance_types"][0]["variants"][0]
    variant["nodes_by_datacenter"] = variant.pop("nodes_per_dc")
    del variant["available_nodes_per_dc"]
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'"Invalid API version"', "answered an error"),
        (b'{"version": "2025-01-29", "data": {"types": []}}', "lacks data.instance_types"),
        (json.dumps({"data": {"instance_types": [{"name": "rtx59", "variants": []}]}}).encode(), "lacks `brand_short` or `variants`"),
        (b'{"data": {"instance_types": [', "not JSON"),
    ],
    ids=["error-string", "renamed-list", "missing-brand", "truncated"],
)  # fmt: skip
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("cloudrift", body, URL)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"data": {"instance_types": [{"brand_short": "RTX 5090", "variants": [{"name": "x", "gpu_count": 1}]}]}}).encode(), "malformed_record: missing field 'cost_per_hour'"),
        (renamed_nodes(), 'malformed_record: no nodes_per_dc / available_nodes_per_dc'),
    ],
    ids=["missing-price-field", "renamed-nodes"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("cloudrift", body) == [(reason,)]


def test_fetch_posts_the_versioned_query_without_credentials(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"version": "2025-01-29", "data": {"instance_types": []}})

    source = cloudrift.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path)
    list(cloudrift.fetch(fetcher))
    [request] = sent
    assert json.loads(request.content) == {"version": "2025-03-21", "data": {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}}}
    assert "X-API-Key" not in request.headers
