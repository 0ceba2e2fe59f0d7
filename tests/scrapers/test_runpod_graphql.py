from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers import runpod_graphql
from gpucat.scrapers.capture import body_hash
from gpucat.scrapers.http import json_body
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)


def items():
    return parse_fixture("runpod-graphql", "runpod/runpod-graphql/gpu-types.json")


def test_whole_record_h100_sxm_secure_on_demand():
    record = by_id(items())["NVIDIA H100 80GB HBM3/secure/on_demand/1x"]
    assert record == {
        "table": "offers",
        "provider": "runpod",
        "offer_id": "NVIDIA H100 80GB HBM3/secure/on_demand/1x",
        "source": "runpod-graphql",
        "instance_type": "1x H100 SXM",
        "region": "global",
        "market": "on_demand",
        "tier": "secure",
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 20.0,
        "ram_gb": 125.0,
        "price": 2.99,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "usd_per_hour": 2.99,
        "usd_per_gpu_hour": 2.99,
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "available",
        "available_count": 8,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://api.runpod.io/graphql",
        "scraped_at": datetime(2026, 11, 20, 6, 0, 9, tzinfo=UTC),
    }


def test_multi_gpu_offers_scale_the_per_gpu_price_and_check_free_gpus():
    ids = by_id(items())
    eight = ids["NVIDIA H100 80GB HBM3/community/on_demand/8x"]
    assert (eight["usd_per_hour"], eight["usd_per_gpu_hour"], eight["interconnect"]) == (21.52, 2.69, "nvswitch")
    # community has 3 free H100s: 2 GPUs are available, 4 are not.
    assert ids["NVIDIA H100 80GB HBM3/community/on_demand/2x"]["availability"] == "available"
    assert ids["NVIDIA H100 80GB HBM3/community/on_demand/4x"]["availability"] == "unavailable"


def test_tier_quirks():
    ids = by_id(items())
    # B200 is secure-only: community fields are 0/null and produce nothing.
    assert not [i for i in ids if i.startswith("NVIDIA B200/community")]
    # Null stockStatus means none in stock.
    assert ids["AMD Instinct MI300X OAM/secure/on_demand/1x"]["availability"] == "unavailable"
    # A zero minimumBidPrice is no spot market, not a free GPU.
    assert not [i for i in ids if i.startswith("NVIDIA H100 NVL/secure/spot")]
    # maxGpuCount 10 gives 1, 2, 4 and 8 GPU offers; 1 gives only one.
    assert sorted(i.rsplit("/", 1)[1] for i in ids if i.startswith("NVIDIA L4/secure/on_demand")) == ["1x", "2x", "4x", "8x"]


def test_unknown_gpu_type_is_rejected_once_and_the_placeholder_entry_is_ignored():
    result = items()
    assert [(r.reasons, r.row["id"]) for r in rejected(result)] == [
        (
            ("mig_slice: 'NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb' is a MIG slice of one GPU, not a whole GPU; gpu_models has no MIG profiles",),
            "NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb",
        )
    ]
    assert not [o for o in offers(result) if o["gpu_name"] == "unknown"]


# The ten priced types a real gpuTypes answer carried that the first mapping lost (issue 7),
# and the two RTX PRO 6000 editions, which are different cards (power, cooling).
@pytest.mark.parametrize(
    ("gpu_id", "gpu_model"),
    [
        ("NVIDIA GeForce RTX 3070", "RTX-3070"),
        ("NVIDIA GeForce RTX 3080", "RTX-3080"),
        ("NVIDIA GeForce RTX 3080 Ti", "RTX-3080-Ti"),
        ("NVIDIA GeForce RTX 4070 Ti", "RTX-4070-Ti"),
        ("NVIDIA GeForce RTX 4080", "RTX-4080"),
        ("NVIDIA GeForce RTX 4080 SUPER", "RTX-4080-SUPER"),
        ("NVIDIA GeForce RTX 5080", "RTX-5080"),
        ("NVIDIA RTX 5000 Ada Generation", "RTX-5000-Ada"),
        ("NVIDIA RTX A2000", "RTX-A2000"),
        ("NVIDIA RTX A4500", "RTX-A4500"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000-Server"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000"),
    ],
)
def test_every_priced_type_maps_to_its_own_model(gpu_id, gpu_model):
    mapped = {o["gpu_model"] for o in offers(items()) if o["gpu_name"] == gpu_id}
    assert mapped == {gpu_model}


def test_community_only_consumer_card_with_its_memory():
    record = by_id(items())["NVIDIA GeForce RTX 3080/community/on_demand/1x"]
    assert (record["gpu_model"], record["gpu_memory_gb"], record["usd_per_gpu_hour"], record["tier"]) == ("RTX-3080", 10.0, 0.17, "community")
    assert not [i for i in by_id(items()) if i.startswith("NVIDIA GeForce RTX 3080/secure")]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"errors":[{"message":"Something went wrong"}],"data":null}', "GraphQL errors: Something went wrong"),
        (b'{"data":{"gpu_types":[]}}', "lacks data.gpuTypes"),
        (b'{"data":{"gpuTypes":[', "not JSON"),
    ],
    ids=["graphql-error", "renamed-field", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("runpod-graphql", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"data":{"gpuTypes":[{"id":"NVIDIA L4","secureCloud":true}]}}', "malformed_record: missing field 'communityCloud'"),
    ],
    ids=["missing-field"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("runpod-graphql", body) == [(reason,)]


def test_fetch_posts_the_query_and_sends_the_key_only_as_a_header(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"data": {"gpuTypes": []}})

    source = runpod_graphql.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"RUNPOD_API_KEY": "rp-secret"})
    [page] = runpod_graphql.fetch(fetcher)
    [request] = sent
    assert json.loads(request.content) == {"query": runpod_graphql.QUERY}
    assert request.headers["Authorization"] == "Bearer rp-secret"
    assert "rp-secret" not in page.url
    assert body_hash(request.content) == body_hash(json_body({"query": runpod_graphql.QUERY}))
