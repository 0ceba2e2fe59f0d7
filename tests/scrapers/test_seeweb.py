from __future__ import annotations

import json
from datetime import UTC, date, datetime

import httpx
import pytest

from gpucat.schemas.errors import MissingApiKey, ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import seeweb
from tests.conftest import FIXTURES
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

FILE = "seeweb/seeweb/plans.json"
URL = "https://api.seeweb.it/ecs/v2/plans"


def items():
    return parse_fixture("seeweb", FILE)


def test_whole_record_h100_plan_in_frosinone():
    # Plan id, price, vCPUs and RAM as SkyPilot's public Seeweb catalog lists ECS1GPU8 (fixtures/seeweb/seeweb/NOTES.md).
    assert by_id(items())["ECS1GPU8/it-fr2"] == {
        "table": "offers",
        "provider": "seeweb",
        "offer_id": "ECS1GPU8/it-fr2",
        "source": "seeweb",
        "instance_type": "ECS1GPU8",
        "region": "it-fr2",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "H100 80GB",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 16.0,  # sent as the string "16"
        "ram_gb": 274.878,  # "262144" MiB
        "price": 1.89,
        "price_unit": "instance_hour",
        "currency": "EUR",
        "usd_per_hour": round(1.89 * 1.0705, 6),
        "usd_per_gpu_hour": round(1.89 * 1.0705, 6),
        "fx_rate_date": date(2024, 6, 28),
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2024, 7, 1, 6, 0, 21, tzinfo=UTC),
    }


def test_one_offer_per_plan_and_region_with_the_plan_price_split_per_gpu():
    ids = by_id(items())
    assert sorted(i for i in ids if i.startswith("ECS1GPU7/")) == ["ECS1GPU7/it-fr2", "ECS1GPU7/it-mi2"]
    four = ids["ECS3GPU7/it-fr2"]
    assert (four["gpu_model"], four["gpu_count"], four["price"], four["usd_per_gpu_hour"]) == ("L40S", 4.0, 3.4, round(3.4 * 1.0705 / 4, 6))
    assert len(offers(items())) == 21


def test_cpu_plans_and_plans_not_sold_are_not_offers_and_unmapped_gpus_are_rejected_once():
    result = items()
    assert not [o for o in offers(result) if o["instance_type"] in ("eCS1", "eCS4", "ECS2GPU2")]
    assert sorted((r.reasons[0], r.row["name"]) for r in rejected(result)) == [
        ("not_a_gpu: 'Tenstorrent Grayskull e150' is a Tenstorrent accelerator, which gpu_models does not carry", "ECS1GPU13"),
    ]
    # Seeweb states the A100's memory, not SXM4 or PCIe: the stand-in, whose form factor is "Unstated"
    assert {o["instance_type"]: (o["gpu_model"], o["gpu_count"]) for o in offers(result) if o["gpu_name"] == "A100 80GB"} == {
        "ECS1GPU3": ("A100-80GB-AnyForm", 1.0), "ECS2GPU3": ("A100-80GB-AnyForm", 2.0),
    }
    # labels in no reviewed table, by the catalog rules: the family alone, and "RTX 6000" confirmed by its 24 GB
    assert {o["instance_type"]: o["gpu_model"] for o in offers(result) if o["instance_type"] in ("ECS1GPU11", "ECS1GPU")} == {
        "ECS1GPU11": "A30",
        "ECS1GPU": "Quadro-RTX-6000",
    }


def plans_with(**changes) -> bytes:
    body = json.loads((FIXTURES / FILE).read_text())
    plan = next(p for p in body["plans"] if p["name"] == "ECS1GPU6")
    plan.update(changes)
    body["plans"] = [plan]
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"hourly_price": 0}, "no_price: hourly_price 0"),
        ({"hourly_price": "n/a"}, "no_price: hourly_price 'n/a'"),
        ({"hourly_price": None}, "no_price: hourly_price None"),
        ({"available_regions": []}, "no_region: the plan lists no region"),
    ],
    ids=["placeholder-zero", "placeholder-text", "missing-price", "no-region"],
)
def test_untrustworthy_plans_are_rejected(changes, reason):
    [item] = parse_bytes("seeweb", plans_with(**changes), URL)
    assert isinstance(item, Rejected) and item.reasons == (reason,)


def test_a_price_sent_as_a_string_is_read():
    [offer] = parse_bytes("seeweb", plans_with(hourly_price="0.38", available_regions=[{"location": "it-fr2"}]), URL)
    assert (offer["price"], offer["currency"]) == (0.38, "EUR")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"status": "ko", "message": "invalid token", "plans": []}', "status 'ko'"),
        (b'{"status": "ok", "plan_list": []}', "lacks plans"),
        (json.dumps({"status": "ok", "plans": [{"name": "ECS1GPU5", "gpu": "1"}]}).encode(), "lacks `name`, `gpu` or `hourly_price`"),
        (plans_with(available_regions="it-fr2"), "available_regions is not a list"),
        (b'{"status": "ok", "plans": [', "not JSON"),
    ],
    ids=["error-status", "renamed-plans", "missing-price-field", "regions-as-string", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("seeweb", body, URL)


def test_fetch_sends_the_token_as_its_header(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"status": "ok", "plans": []})

    source = seeweb.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"SEEWEB_API_TOKEN": "sw-secret"})
    [page] = seeweb.fetch(fetcher)
    assert sent[0].headers["X-APITOKEN"] == "sw-secret"
    assert "sw-secret" not in page.url


def test_without_the_token_the_source_is_skipped(tmp_path):
    source = seeweb.SOURCE
    with pytest.raises(MissingApiKey):
        mock_fetcher(source, lambda r: httpx.Response(500), tmp_path)
