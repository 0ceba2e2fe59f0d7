from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import MissingApiKey, ParseError
from gpucat.scrapers import lambda_instance_types
from tests.conftest import FIXTURES
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

BODY = "lambda/lambda-instance-types/instance-types.json"
URL = "https://cloud.lambda.ai/api/v1/instance-types"


def items():
    return parse_fixture("lambda-instance-types", BODY)


def entry(name: str) -> dict:
    return json.loads((FIXTURES / BODY).read_text())["data"][name]


def test_whole_record_8x_h100_sxm5():
    assert by_id(items())["gpu_8x_h100_sxm5/us-midwest-1"] == {
        "table": "offers",
        "provider": "lambda",
        "offer_id": "gpu_8x_h100_sxm5/us-midwest-1",
        "source": "lambda-instance-types",
        "instance_type": "gpu_8x_h100_sxm5",
        "region": "us-midwest-1",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 208.0,
        "ram_gb": 1932.735,  # 1800 GiB
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
        "availability": "available",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 30, 6, 0, 5, tzinfo=UTC),
    }


def test_form_factors_stay_distinct_and_capacity_gives_regions():
    ids = by_id(items())
    assert {ids[i]["gpu_model"] for i in ("gpu_1x_h100_pcie/us-west-1", "gpu_1x_h100_sxm5/us-south-1")} == {"H100-PCIe", "H100-SXM"}
    assert sorted(i for i in ids if i.startswith("gpu_1x_a10/")) == ["gpu_1x_a10/us-east-1", "gpu_1x_a10/us-west-1"]
    # No capacity anywhere: the price stays visible, as unavailable in an unknown region.
    unavailable = ids["gpu_8x_a100_80gb_sxm4/unknown"]
    assert (unavailable["availability"], unavailable["gpu_model"], unavailable["price"]) == ("unavailable", "A100-SXM4-80GB", 14.32)


def test_a_type_without_gpu_description_is_read_from_its_description():
    a6000 = by_id(items())["gpu_1x_a6000/unknown"]
    assert (a6000["gpu_model"], a6000["gpu_name"], a6000["price"]) == ("RTX-A6000", "A6000", 0.8)


def test_rejections():
    assert sorted((r.row["instance_type"]["name"], r.reasons) for r in rejected(items())) == [
        ("gpu_1x_b200_sxm6", ("no_price: price_cents_per_hour 0",)),
    ]
    # "RTX 6000 (24 GB)" drops "Quadro": its 24 GB says the Turing Quadro RTX 6000, not the 48 GB RTX 6000 Ada
    assert by_id(items())["gpu_1x_rtx6000/us-south-1"]["gpu_model"] == "Quadro-RTX-6000"


def test_description_and_specs_disagreeing_on_the_gpu_count_is_rejected():
    bad = entry("gpu_1x_h100_sxm5")
    bad["instance_type"]["specs"]["gpus"] = 2
    [item] = parse_bytes("lambda-instance-types", json.dumps({"data": {"x": bad}}).encode())
    assert item.reasons == ("gpu_count_mismatch: '1x H100 (80 GB SXM5)' vs specs.gpus 2",)


def _without(name: str, *path: str) -> bytes:
    value = entry(name)
    target = value
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return json.dumps({"data": {name: value}}).encode()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}}', "lacks data \\(a JSON object"),
        (json.dumps({"instance_types": {}}).encode(), "lacks data \\(a JSON object"),
        (b'{"data": {', "not JSON"),
    ],
    ids=["api-error", "renamed-field", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("lambda-instance-types", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (_without("gpu_1x_a10", "instance_type", "price_cents_per_hour"), "malformed_record: missing field 'price_cents_per_hour'"),
        (_without("gpu_1x_a10", "regions_with_capacity_available"), "malformed_record: missing field 'regions_with_capacity_available'"),
    ],
    ids=["missing-price", "missing-regions"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("lambda-instance-types", body) == [(reason,)]


def test_keyless_live_fetch_is_skipped_with_the_variable_named(tmp_path):
    source = lambda_instance_types.SOURCE
    with pytest.raises(MissingApiKey) as info:
        mock_fetcher(source, lambda r: httpx.Response(500), tmp_path)
    assert info.value.env_var == "LAMBDA_API_KEY"


def test_fetch_sends_the_key_as_a_bearer_token_only(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"data": {}})

    source = lambda_instance_types.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"LAMBDA_API_KEY": "secret_lambda"})
    [page] = lambda_instance_types.fetch(fetcher)
    assert sent[0].headers["Authorization"] == "Bearer secret_lambda"
    assert page.url == URL


@pytest.mark.parametrize(
    ("gpu_description", "description", "model"),
    [
        # Lambda's vendor wording: memory and form factor come from the description when the GPU text lacks them.
        ("NVIDIA A100 PCIe", "1x A100 (40 GB PCIe)", "A100-PCIe-40GB"),
        ("NVIDIA Quadro RTX 6000", "1x Quadro RTX 6000 (24 GB)", "Quadro-RTX-6000"),
        ("NVIDIA A100 80 GB SXM4", "1x A100 (80 GB SXM4)", "A100-SXM4-80GB"),
        ("NVIDIA H100 SXM5", "1x H100 (80 GB SXM5)", "H100-SXM"),
        # the description's form factor settles what the GPU's text leaves unsaid, before any stand-in
        ("NVIDIA A100", "1x A100 (40 GB PCIe)", "A100-PCIe-40GB"),
        ("NVIDIA A100", "1x A100 (80 GB SXM4)", "A100-SXM4-80GB"),
        # neither says SXM2 or PCIe: the stand-in, which claims no form factor
        ("Tesla V100 (16 GB)", "1x Tesla V100 (16 GB)", "V100-16GB-AnyForm"),
        ("NVIDIA Tesla V100", "1x Tesla V100 (16 GB)", "V100-16GB-AnyForm"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "1x RTX PRO 6000 (96 GB)", "RTX-PRO-6000-Server"),
    ],
)
def test_vendor_wordings_map_by_the_catalog_rules(gpu_description, description, model):
    typed = entry("gpu_1x_h100_sxm5")
    typed["instance_type"].update(gpu_description=gpu_description, description=description)
    found = parse_bytes("lambda-instance-types", json.dumps({"data": {"x": typed}}).encode())
    assert found and {o["gpu_model"] for o in found} == {model}
