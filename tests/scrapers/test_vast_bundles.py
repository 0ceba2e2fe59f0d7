from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import vast_bundles
from tests.conftest import FIXTURES
from tests.scrapers.helpers import (
    FETCHED,
    by_id,
    mock_fetcher,
    normalize_bytes,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

ON_DEMAND = "vast/vast-bundles/bundles-on-demand.json"
BID = "vast/vast-bundles/bundles-bid.json"


def items():
    return parse_fixture("vast-bundles", ON_DEMAND, BID)


def url_for(market: str) -> str:
    return str(httpx.URL(vast_bundles.URL, params={"q": json.dumps(vast_bundles.query(market, keyed=False), separators=(",", ":"), sort_keys=True)}))


def one_offer(**changes) -> dict:
    offer = json.loads((FIXTURES / ON_DEMAND).read_text())["offers"][1]
    return {**offer, **changes}


def test_whole_record_h100_sxm_on_demand():
    record = by_id(items())["27110452/on_demand"]
    assert record == {
        "table": "offers",
        "provider": "vast",
        "offer_id": "27110452/on_demand",
        "source": "vast-bundles",
        "instance_type": "8x H100 SXM (machine 31877)",
        "region": "Texas, US",
        "market": "on_demand",
        "tier": None,
        "storage_usd_per_gb_month": 0.15,
        "egress_usd_per_gb": 0.001,
        "ingress_usd_per_gb": 0.00117,
        "price_excludes": None,
        "gpu_name": "H100 SXM",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 224.0,
        "ram_gb": 2163.979,  # 2063731 MiB
        "price": 17.6,
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "usd_per_hour": 17.6,
        "usd_per_gpu_hour": 2.2,
        "availability": "available",
        "available_count": 8,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": record["source_url"],
        "scraped_at": datetime(2026, 11, 30, 6, 0, 7, tzinfo=UTC),
    }
    assert vast_bundles.market_of(record["source_url"]) == "on_demand"


def test_spot_comes_from_the_bid_search_not_from_is_bid():
    ids = by_id(items())
    # The same ask in both answers, is_bid false in both: on-demand at dph_base, spot at min_bid.
    assert (ids["27110452/on_demand"]["price"], ids["27110452/spot"]["price"]) == (17.6, 9.6)
    assert {o["market"] for o in offers(items()) if o["offer_id"].endswith("/spot")} == {"spot"}
    assert sorted(i for i in ids if i.endswith("/spot")) == ["11684738/spot", "24410078/spot", "27110452/spot", "27511840/spot"]


def test_compute_price_excludes_the_storage_in_dph_total():
    sample = by_id(items())["11684738/on_demand"]
    # dph_total 0.2466759 = dph_base 0.2466667 + 5 GB of storage at 0.00133 USD/GB-month.
    assert sample["price"] == 0.246667
    assert (sample["storage_usd_per_gb_month"], sample["egress_usd_per_gb"], sample["ingress_usd_per_gb"]) == (0.001333333, 0.0, 0.0)


def test_mib_maps_to_the_nameplate_and_a_host_share_is_not_a_fractional_gpu():
    ids = by_id(items())
    assert ids["25873310/on_demand"]["gpu_model"] == "A100-SXM4-80GB"  # 81920 MiB
    assert ids["25873902/on_demand"]["gpu_model"] == "A100-SXM4-40GB"  # 40960 MiB
    assert ids["26995871/on_demand"]["gpu_model"] == "H100-NVL"  # 95830 MiB, 94 GB nameplate
    # gpu_frac 0.25: one whole RTX 4090 of a four-GPU host.
    assert (ids["11684738/on_demand"]["gpu_count"], ids["11684738/on_demand"]["gpu_memory_gb"]) == (1.0, 24.0)


def test_missing_location_cpu_and_rented_offers():
    ids = by_id(items())
    assert ids["24410078/on_demand"]["region"] == "unknown"
    rented = ids["25510987/on_demand"]
    assert (rented["availability"], rented["available_count"], rented["vcpus"], rented["ram_gb"]) == ("unavailable", 0, None, None)


def test_rejections():
    assert sorted((r.row["id"], r.reasons) for r in rejected(items())) == [
        (26602219, ("memory_mismatch: 65536 MiB fits no 'A100 SXM4' nameplate (40 GB, 80 GB)",)),
        (26811730, ("no_price: dph_base 0.0",)),
        (27902266, ("no_price: min_bid None",)),
    ]


@pytest.mark.parametrize(
    ("body", "url", "message"),
    [
        (b'{"offers": []}', "https://console.vast.ai/api/v0/bundles/", "does not say which search"),
        (b'{"offers": []}', "https://console.vast.ai/api/v0/bundles/?q=%7B%22type%22%3A%22reserved%22%7D", "does not say which search"),
        (b'{"success": false, "error": "invalid_request"}', None, "lacks offers"),
        (b'{"offers": [', None, "not JSON"),
    ],
    ids=["no-query", "unknown-market", "error-answer", "truncated"],
)
def test_bad_bodies_fail_the_source(body, url, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("vast-bundles", body, url=url or url_for("on-demand"))


def test_an_offer_without_a_field_it_needs_is_rejected_with_its_reason():
    """One offer of the wrong shape is one counted rejection naming what is missing; the page still loads."""
    broken = {k: v for k, v in one_offer().items() if k != "gpu_ram"}
    good = one_offer()
    items = parse_bytes("vast-bundles", json.dumps({"offers": [broken, good]}).encode(), url=url_for("on-demand"))
    assert items[0] == Rejected("offers", ("malformed_record: missing field 'gpu_ram'",), broken)
    assert [type(i).__name__ for i in items[1:]] == ["dict"]


def _fetch(tmp_path, env):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"offers": []})

    source = vast_bundles.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env=env)
    return list(vast_bundles.fetch(fetcher)), sent


def test_keyless_fetch_runs_both_searches_within_the_cap(tmp_path):
    pages, sent = _fetch(tmp_path, env={})
    queries = [json.loads(parse_qs(urlsplit(str(r.url)).query)["q"][0]) for r in sent]
    assert [q["type"] for q in queries] == ["on-demand", "bid"]
    assert not any("limit" in q for q in queries)
    assert not any("Authorization" in r.headers for r in sent)
    assert [vast_bundles.market_of(p.url) for p in pages] == ["on_demand", "spot"]


def test_keyed_fetch_sends_the_key_as_a_bearer_token_and_lifts_the_cap(tmp_path):
    pages, sent = _fetch(tmp_path, env={"VAST_API_KEY": "vast-secret"})
    assert [r.headers["Authorization"] for r in sent] == ["Bearer vast-secret"] * 2
    assert all(json.loads(parse_qs(urlsplit(str(r.url)).query)["q"][0])["limit"] == vast_bundles.KEYED_LIMIT for r in sent)
    assert not any("vast-secret" in p.url for p in pages)


@pytest.mark.parametrize(
    ("gpu_name", "gpu_ram", "model", "reason"),
    [
        # Names outside the reviewed table go through the catalog rules, with usable memory in
        # [0.88, 1.10] x the nameplate: a B300 reports its usable MiB well below 288 GB.
        ("B300", 275040, "B300", None),
        ("B300", 262144, "B300", None),
        ("B300", 180000, None, "memory_mismatch: 'B300' with 188.744 GB fits none of B300"),
        ("H200", 143771, "H200-SXM", None),  # the reviewed table settles SXM vs NVL
        ("A100 SXM4", 65536, None, "memory_mismatch: 65536 MiB fits no 'A100 SXM4' nameplate (40 GB, 80 GB)"),
        ("GTX 1080 Ti", 11264, "GTX-1080-Ti", None),  # 11.8 GB reported for an 11 GB card
        ("GTX 1090 Ti", 11264, None, "unknown_gpu: 'GTX 1090 Ti'"),
        # Vast gpu_names (vast-ai/vast-cli vastai/data/query.py) of cards with rows of their own, at
        # their nameplate MiB; a bare "H800" names no form factor and has no stand-in
        ("H800 PCIE", 81559, "H800-PCIe", None),
        ("H800 SXM", 81559, "H800-SXM", None),
        ("H800", 81559, None, "ambiguous_gpu: 'H800' could be H800-PCIe, H800-SXM"),
        ("A100X", 81920, "A100X", None),
        ("RTX 3050", 8192, "RTX-3050", None),
        ("RTX 5880Ada", 49140, "RTX-5880-Ada", None),
        ("CMP 50HX", 10240, "CMP-50HX", None),
        ("InstinctMI50", 16384, "MI50", None),
        ("Radeon VII", 16384, "Radeon-VII", None),
        ("RX 7900 XTX", 24576, "Radeon-RX-7900-XTX", None),
        ("PRO W7900", 49152, "Radeon-PRO-W7900", None),
    ],
)
def test_gpu_names_map_by_rules_with_usable_memory_ranges(gpu_name, gpu_ram, model, reason):
    body = json.dumps({"offers": [one_offer(gpu_name=gpu_name, gpu_ram=gpu_ram)]}).encode()
    [item] = parse_bytes("vast-bundles", body, url=url_for("on-demand"))
    if model is None:
        assert item.reasons == (reason,)
    else:
        assert (item["gpu_model"], item["gpu_name"]) == (model, gpu_name)


def test_a_real_b300_search_answer_maps_every_gpu():
    """fixtures/vast/vast-bundles/real/b300_asc.json: a real answer (getcomputable/gpu-index), kept as captured."""
    body = (FIXTURES / "vast" / "vast-bundles" / "real" / "b300_asc.json").read_bytes()
    found = parse_bytes("vast-bundles", body, url=url_for("on-demand"))
    assert [(o["gpu_model"], o["gpu_count"], o["price"], o["instance_type"]) for o in found] == [
        ("B300", 2.0, 15.0, "2x B300 (machine 144888)"),
        ("B300", 4.0, 30.0, "4x B300 (machine 144888)"),
    ]


def test_whole_record_of_an_amd_offer_mapped_by_the_rules():
    """An eight-card Radeon host (the fixture's H100 host with Vast's AMD spelling and MiB): the catalog
    rules give the model, the nameplate gives the memory, and PCIe cards claim no NVSwitch."""
    offer = one_offer(gpu_name="RX 7900 XTX", gpu_ram=24576)
    [record] = normalize_bytes("vast-bundles", json.dumps({"offers": [offer]}).encode(), url=url_for("on-demand"))
    assert record == {
        "table": "offers",
        "provider": "vast",
        "offer_id": "27110452/on_demand",
        "source": "vast-bundles",
        "instance_type": "8x RX 7900 XTX (machine 31877)",
        "region": "Texas, US",
        "market": "on_demand",
        "tier": None,
        "storage_usd_per_gb_month": 0.15,
        "egress_usd_per_gb": 0.001,
        "ingress_usd_per_gb": 0.00117,
        "price_excludes": None,
        "gpu_name": "RX 7900 XTX",
        "gpu_model": "Radeon-RX-7900-XTX",
        "gpu_count": 8.0,
        "gpu_memory_gb": 24.0,
        "vcpus": 224.0,
        "ram_gb": 2163.979,
        "price": 17.6,
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "usd_per_hour": 17.6,
        "usd_per_gpu_hour": 2.2,
        "availability": "available",
        "available_count": 8,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": record["source_url"],
        "scraped_at": FETCHED,
    }
