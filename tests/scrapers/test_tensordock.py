from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import MissingApiKey, ParseError
from gpucat.scrapers import tensordock
from tests.conftest import FIXTURES
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

BODY = "tensordock/tensordock/locations.json"
AUSTIN = "3f1c9a52-6b1e-4d8e-9a43-0c7e5d2b8f11"


def items():
    return parse_fixture("tensordock", BODY)


def test_whole_record_h100_sxm5_two_gpus():
    assert by_id(items())[f"{AUSTIN}/h100-sxm5-80gb/2x"] == {
        "table": "offers",
        "provider": "tensordock",
        "offer_id": f"{AUSTIN}/h100-sxm5-80gb/2x",
        "source": "tensordock",
        "instance_type": "2x H100 SXM5 80GB",
        "region": "Austin, Texas, United States",
        "market": "on_demand",
        "tier": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": "vcpu 0.003 USD/h; ram 0.002 USD/GB-h; storage 0.00005 USD/GB-h",
        "gpu_name": "h100-sxm5-80gb",
        "gpu_model": "H100-SXM",
        "gpu_count": 2.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 2.2,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "usd_per_hour": 4.4,
        "usd_per_gpu_hour": 2.2,
        "availability": "available",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://dashboard.tensordock.com/api/v2/locations",
        "scraped_at": datetime(2026, 11, 30, 6, 0, 13, tzinfo=UTC),
    }


def test_gpu_counts_stop_at_max_count_and_components_travel_with_each_offer():
    ids = by_id(items())
    assert sorted(i.rsplit("/", 1)[1] for i in ids if "/geforcertx4090-pcie-24gb/" in i) == ["1x", "2x", "4x"]
    helsinki = [o for o in ids.values() if o["region"].startswith("Helsinki")]
    # each GPU of a location carries its own component prices (the RTX 3080's are lower)
    assert {o["gpu_model"]: o["price_excludes"] for o in helsinki} == {
        "L40S": "vcpu 0.004 USD/h; ram 0.003 USD/GB-h; storage 0.0001 USD/GB-h",
        "RTX-3080": "vcpu 0.003 USD/h; ram 0.002 USD/GB-h; storage 0.00005 USD/GB-h",
    }
    assert len(ids) == 23


def test_rejections():
    assert sorted((r.row["v0Name"], r.reasons) for r in rejected(items())) == [
        ("v100-sxm2-16gb", ("no_price: price_per_hr 0.0",)),
    ]


def _gpu() -> dict:
    return json.loads((FIXTURES / BODY).read_text())["data"]["locations"][0]["gpus"][0]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": "Unauthorized"}', "lacks data.locations"),
        (json.dumps({"data": {"hostnodes": []}}).encode(), "lacks data.locations"),
        (b'{"data": {"locations": [', "not JSON"),
    ],
    ids=["api-error", "renamed-field", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("tensordock", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"data": {"locations": [{"id": "x", "city": "A", "stateprovince": "B", "country": "C", "gpus": [{k: v for k, v in _gpu().items() if k != "pricing"}]}]}}).encode(), "malformed_record: missing field 'pricing'"),
    ],
    ids=["missing-field"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("tensordock", body) == [(reason,)]


def test_keyless_live_fetch_is_skipped_with_the_variable_named(tmp_path):
    source = tensordock.SOURCE
    with pytest.raises(MissingApiKey) as info:
        mock_fetcher(source, lambda r: httpx.Response(500), tmp_path)
    assert info.value.env_var == "TENSORDOCK_API_KEY"


def test_fetch_sends_the_key_as_a_bearer_token(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"data": {"locations": []}})

    source = tensordock.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"TENSORDOCK_API_KEY": "td-secret"})
    [page] = tensordock.fetch(fetcher)
    assert sent[0].headers["Authorization"] == "Bearer td-secret"
    assert "td-secret" not in page.url
