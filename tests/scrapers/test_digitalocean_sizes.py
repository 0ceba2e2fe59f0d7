from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import MissingApiKey, ParseError
from gpucat.scrapers import digitalocean_sizes
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

PAGE_1 = "digitalocean/digitalocean-sizes/sizes-page-1.json"
PAGE_2 = "digitalocean/digitalocean-sizes/sizes-page-2.json"


def items():
    return parse_fixture("digitalocean-sizes", PAGE_1, PAGE_2)


def size(slug: str, **changes) -> dict:
    for page in (PAGE_1, PAGE_2):
        for s in json.loads((FIXTURES / page).read_text())["sizes"]:
            if s["slug"] == slug:
                return {**s, **changes}
    raise KeyError(slug)


def test_whole_record_h100x8():
    assert by_id(items())["gpu-h100x8-640gb/tor1"] == {
        "table": "offers",
        "provider": "digitalocean",
        "offer_id": "gpu-h100x8-640gb/tor1",
        "source": "digitalocean-sizes",
        "instance_type": "gpu-h100x8-640gb",
        "region": "tor1",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "nvidia_h100",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 160.0,
        "ram_gb": 2061.584,  # 1966080 MiB
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
        "source_url": "https://api.digitalocean.com/v2/sizes?page=2&per_page=200",
        "scraped_at": datetime(2026, 11, 30, 6, 0, 11, tzinfo=UTC),
    }


def test_cpu_droplets_are_not_gpu_offers_and_are_not_rejected():
    result = items()
    assert not [o for o in offers(result) if o["instance_type"].startswith("s-")]
    assert not [r for r in rejected(result) if r.row["slug"].startswith("s-")]


def test_both_pages_are_read_and_an_unavailable_size_stays_visible():
    ids = by_id(items())
    assert len(ids) == 13
    # nvidia_a16 is in no reviewed table: the catalog rules read "nvidia" as the vendor word
    assert {o["gpu_model"] for o in ids.values()} == {"RTX-4000-Ada", "RTX-6000-Ada", "L40S", "H100-SXM", "H200-SXM", "MI300X", "A16"}
    h200 = ids["gpu-h200x8-1128gb/unknown"]
    assert (h200["availability"], h200["price"]) == ("unavailable", 27.52)


def test_rejections():
    assert sorted((r.row["slug"], r.reasons) for r in rejected(items())) == [
        ("gpu-l40sx8-384gb", ("no_price: price_hourly 0",)),
    ]


@pytest.mark.parametrize(
    ("changed", "reason"),
    [
        (size("gpu-h100x8-640gb", gpu_info={"count": 8, "vram": {"amount": 655360, "unit": "mib"}, "model": "nvidia_h100"}), None),
        (size("gpu-h100x8-640gb", gpu_info={"count": 8, "vram": {"amount": 80, "unit": "gib"}, "model": "nvidia_h100"}), "memory_mismatch"),
        (size("gpu-h100x8-640gb", gpu_info={"count": 8, "vram": {"amount": 640, "unit": "GB?"}, "model": "nvidia_h100"}), "unknown_unit"),
    ],
    ids=["mib-total", "per-gpu-not-total", "unknown-unit"],
)
def test_vram_is_the_droplet_total_in_its_unit(changed, reason):
    result = parse_bytes("digitalocean-sizes", json.dumps({"sizes": [changed], "links": {}, "meta": {"total": 1}}).encode())
    if reason is None:
        assert [o["gpu_model"] for o in result] == ["H100-SXM", "H100-SXM"]
    else:
        [item] = result
        assert item.reasons[0].startswith(reason)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"id": "unauthorized", "message": "Unable to authenticate you"}', "lacks sizes"),
        (json.dumps({"droplet_sizes": []}).encode(), "lacks sizes"),
        (b'{"sizes": [', "not JSON"),
    ],
    ids=["api-error", "renamed-field", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("digitalocean-sizes", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"sizes": [{k: v for k, v in size("gpu-h100x1-80gb").items() if k != "price_hourly"}]}).encode(), "malformed_record: missing field 'price_hourly'"),
    ],
    ids=["missing-field"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("digitalocean-sizes", body) == [(reason,)]


def test_keyless_live_fetch_is_skipped_with_the_variable_named(tmp_path):
    source = digitalocean_sizes.SOURCE
    with pytest.raises(MissingApiKey) as info:
        mock_fetcher(source, lambda r: httpx.Response(500), tmp_path)
    assert info.value.env_var == "DIGITALOCEAN_TOKEN"


def test_fetch_follows_next_links_with_the_token(tmp_path):
    sent = []
    base = "https://api.digitalocean.com/v2/sizes"
    answers = [
        {"sizes": [], "links": {"pages": {"next": f"{base}?page=2&per_page=200"}}, "meta": {"total": 3}},
        {"sizes": [], "links": {"pages": {"next": f"{base}?page=3&per_page=200", "prev": f"{base}?page=1&per_page=200"}}, "meta": {"total": 3}},
        {"sizes": [], "links": {"pages": {"prev": f"{base}?page=2&per_page=200"}}, "meta": {"total": 3}},
    ]

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json=answers[len(sent) - 1])

    source = digitalocean_sizes.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"DIGITALOCEAN_TOKEN": "dop_v1_secret"})
    pages = list(digitalocean_sizes.fetch(fetcher))
    assert [str(r.url) for r in sent] == [f"{base}?per_page=200", f"{base}?page=2&per_page=200", f"{base}?page=3&per_page=200"]
    assert {r.headers["Authorization"] for r in sent} == {"Bearer dop_v1_secret"}
    assert len(pages) == 3
