from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import MissingApiKey, ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import hotaisle
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    parse_bytes,
    parse_fixture,
    rejection_reasons,
)

AVAILABLE = "hotaisle/hotaisle/available.json"
USER = "hotaisle/hotaisle/user.json"
AVAILABLE_URL = "https://admin.hotaisle.app/api/teams/example-team/virtual_machines/available/"
GIB = 2**30


def items():
    return parse_fixture("hotaisle", USER, AVAILABLE)


def vm(cents=199, gpus=(("MI300X", 1),), **specs):
    return {
        "OnDemandPrice": cents,
        "Specs": {
            "cpu_cores": 13,
            "cpus": {"count": 1, "cores": 13, "model": "Xeon Platinum 8470", "manufacturer": "Intel"},
            "ram_capacity": 224 * GIB,
            "disk_capacity": 1536 * GIB,
            "gpus": [{"count": n, "manufacturer": "AMD", "model": model} for model, n in gpus],
        }
        | specs,
    }


def available(*vms):
    return json.dumps(list(vms)).encode()


def test_whole_record_one_mi300x_priced_in_cents():
    assert by_id(items())["1x-MI300X/13c/224gib/on_demand"] == {
        "table": "offers",
        "provider": "hotaisle",
        "offer_id": "1x-MI300X/13c/224gib/on_demand",
        "source": "hotaisle",
        "instance_type": "1x MI300X, 13 vCPU, 224 GiB RAM",
        "region": "us-michigan-1",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "MI300X",
        "gpu_model": "MI300X",
        "gpu_count": 1.0,
        "gpu_memory_gb": 192.0,  # nameplate: Hot Aisle states none
        "vcpus": 13.0,
        "ram_gb": 240.518,  # 224 GiB in bytes
        "price": 1.99,  # OnDemandPrice 199 cents
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 1.99,
        "usd_per_gpu_hour": 1.99,
        "availability": "available",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": AVAILABLE_URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 17, tzinfo=UTC),
    }


def test_every_listed_configuration_is_an_offer_and_the_team_lookup_is_none():
    assert {o["offer_id"]: (o["gpu_count"], o["usd_per_hour"], o["usd_per_gpu_hour"], o["interconnect"]) for o in by_id(items()).values()} == {
        "1x-MI300X/13c/224gib/on_demand": (1.0, 1.99, 1.99, None),
        "2x-MI300X/26c/448gib/on_demand": (2.0, 3.98, 1.99, "infinity_fabric"),
        "4x-MI300X/52c/896gib/on_demand": (4.0, 7.96, 1.99, "infinity_fabric"),
    }
    assert parse_bytes("hotaisle", fixture_path(USER).read_bytes(), url="https://admin.hotaisle.app/api/user/") == []


@pytest.mark.parametrize(
    ("entry", "reasons"),
    [
        (vm(cents=0), ("no_price: OnDemandPrice 0",)),
        (vm(cents="1.99"), ("no_price: OnDemandPrice '1.99'",)),
        (vm(gpus=(("MI999", 1),)), ("unknown_gpu: 'MI999'",)),  # a name no accelerator has (MI210 now maps)
        (vm(gpus=(("MI300X", 1), ("MI325X", 1))), ("unknown_gpu: 'MI300X + MI325X'", "expected one GPU model per VM")),
    ],
    ids=["zero-price", "price-not-in-cents", "unknown-gpu", "mixed-gpus"],
)
def test_vm_traps_are_rejected(entry, reasons):
    [result] = parse_bytes("hotaisle", available(entry), url=AVAILABLE_URL)
    assert isinstance(result, Rejected) and result.reasons == reasons


@pytest.mark.parametrize(
    ("payload", "url", "message"),
    [
        (json.dumps({"vms": []}).encode(), AVAILABLE_URL, "not a JSON list"),
        (json.dumps({"teams": []}).encode(), "https://admin.hotaisle.app/api/user/", "names no team"),
        (b'[{"OnDemandPrice": 199', AVAILABLE_URL, "not JSON"),
    ],
    ids=["not-an-array", "no-team", "truncated"],
)
def test_bad_bodies_fail_the_source(payload, url, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("hotaisle", payload, url=url)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (available({"OnDemandPrice": 199, "specs": {}}), "malformed_record: missing field 'Specs'"),
        (available({"OnDemandPrice": 199, "Specs": {k: v for k, v in vm()["Specs"].items() if k != "gpus"}}), "malformed_record: missing field 'gpus'"),
    ],
    ids=["renamed-specs", "missing-gpus"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("hotaisle", body) == [(reason,)]


def test_fetch_finds_the_team_then_lists_its_vms_with_the_key_as_a_header(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        if request.url.path == "/api/user/":
            return httpx.Response(200, json={"teams": [{"handle": "my team"}, {"handle": "other"}]})
        return httpx.Response(200, json=[])

    source = hotaisle.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"HOTAISLE_API_KEY": "ha-secret"})
    pages = list(hotaisle.fetch(fetcher))
    assert [str(r.url) for r in sent] == ["https://admin.hotaisle.app/api/user/", "https://admin.hotaisle.app/api/teams/my%20team/virtual_machines/available/"]
    assert {r.headers["Authorization"] for r in sent} == {"Token ha-secret"}
    assert not [p for p in pages if "ha-secret" in p.url]


def test_without_the_key_the_source_is_skipped(tmp_path):
    source = hotaisle.SOURCE
    with pytest.raises(MissingApiKey, match="HOTAISLE_API_KEY"):
        mock_fetcher(source, lambda r: httpx.Response(500), tmp_path)
    assert (source.api_key_env, source.api_key_required) == ("HOTAISLE_API_KEY", True)
