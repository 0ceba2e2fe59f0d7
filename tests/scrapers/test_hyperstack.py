from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import MissingApiKey, ParseError
from gpucat.scrapers import hyperstack
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
    skipped,
)


def items():
    return parse_fixture("hyperstack", "hyperstack/hyperstack/pricebook.json")


def test_whole_record_h100_nvlink():
    record = by_id(items())["H100-80G-PCIe-NVLink/global/on_demand"]
    assert record == {
        "table": "offers",
        "provider": "hyperstack",
        "offer_id": "H100-80G-PCIe-NVLink/global/on_demand",
        "source": "hyperstack",
        "instance_type": "H100-80G-PCIe-NVLink",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "H100-80G-PCIe-NVLink",
        "gpu_model": "H100-PCIe",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 2.6,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 2.6,
        "usd_per_gpu_hour": 2.6,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://infrahub-api.nexgencloud.com/v1/pricebook",
        "scraped_at": datetime(2026, 11, 20, 6, 0, 11, tzinfo=UTC),
    }


def test_sxm_nvlink_and_pcie_are_different_offers():
    ids = by_id(items())
    h100 = {o["instance_type"]: (o["gpu_model"], o["usd_per_gpu_hour"]) for o in ids.values() if o["instance_type"].startswith("H100") and o["market"] == "on_demand"}
    assert h100 == {"H100-80G-SXM5": ("H100-SXM", 3.2), "H100-80G-PCIe-NVLink": ("H100-PCIe", 2.6), "H100-80G-PCIe": ("H100-PCIe", 2.5)}


def test_spot_names_and_the_discounted_price():
    result = items()
    assert len(offers(result)) == 18 and rejected(result) == []
    assert sorted(o["instance_type"] for o in offers(result) if o["market"] == "spot") == ["A100-80G-PCIe", "H100-80G-PCIe", "L40", "RTX-A6000", "RTX-PRO6000-SE"]
    assert by_id(result)["RTX-PRO6000-SE/global/spot"]["gpu_model"] == "RTX-PRO-6000-Server"
    # value is what is charged; original_value is the list price before the discount
    assert by_id(result)["H200-141G-SXM5/global/on_demand"]["price"] == 3.99


def entry(name, value, **kw):
    return {"id": 1, "name": name, "value": value, "original_value": value, "discount_applied": False, "start_time": None, "end_time": None, **kw}


def test_non_gpu_entries_are_skipped_unknown_gpus_rejected():
    # "Cloud-SSD" is a hypothetical non-GPU name: whether and how the live pricebook lists such resources is unverified.
    body = json.dumps([entry("Cloud-SSD", 0.0001), entry("H999-80G", 3.5), entry("GH200-96G", 3.5), entry("L40", 1.0)]).encode()
    result = parse_bytes("hyperstack", body)
    assert [r.reasons for r in rejected(result)] == [("unknown_gpu: 'H999-80G'",)]
    assert skipped(result) == {"not_gpu: not a GPU in the pricebook": 1}
    # GH200-96G is in no reviewed table: the catalog rules read the family and its 96 GB
    assert [o["gpu_model"] for o in result if isinstance(o, dict)] == ["GH200", "L40"]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (entry("L40", 0), "no_price: 0"),
        (entry("L40", None), "no_price: None"),
        (entry("L40", 1.0, end_time="2026-01-01T00:00:00Z"), "expired_price: ended 2026-01-01T00:00:00Z"),
    ],
    ids=["zero", "null", "expired"],
)
def test_unusable_prices_are_rejected(bad, reason):
    [result] = parse_bytes("hyperstack", json.dumps([bad]).encode())
    assert result.reasons == (reason,)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"status": false, "message": "Invalid API key"}', "not a list of prices: Invalid API key"),
        (b"[{", "not JSON"),
    ],
    ids=["error-object", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("hyperstack", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'[{"id": 1, "value": 1.0}]', "malformed_record: missing field 'name'"),
    ],
    ids=["missing-field"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("hyperstack", body) == [(reason,)]


def test_fetch_sends_the_key_as_the_api_key_header_only(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json=[])

    source = hyperstack.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"HYPERSTACK_API_KEY": "hs-secret"})
    [page] = hyperstack.fetch(fetcher)
    [request] = sent
    assert request.headers["api_key"] == "hs-secret" and "hs-secret" not in str(request.url) and "hs-secret" not in page.url


def test_a_keyless_run_is_skipped_naming_the_variable(tmp_path):
    source = hyperstack.SOURCE
    with pytest.raises(MissingApiKey, match="HYPERSTACK_API_KEY"):
        mock_fetcher(source, lambda r: httpx.Response(200), tmp_path)
