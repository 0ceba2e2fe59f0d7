from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from schemas.errors import ParseError
from scrapers import together
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

FIXTURE = "together/together/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()


def items():
    return parse_fixture("together", FIXTURE)


def test_whole_record_hgx_h100_cluster_node():
    assert by_id(items())["gpu-clusters/NVIDIA HGX H100/on_demand"] == {
        "table": "offers",
        "provider": "together",
        "offer_id": "gpu-clusters/NVIDIA HGX H100/on_demand",
        "source": "together",
        "instance_type": "NVIDIA HGX H100 cluster node (8 GPUs)",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "NVIDIA HGX H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 3.99,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 31.92,
        "usd_per_gpu_hour": 3.99,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://www.together.ai/pricing",
        "scraped_at": datetime(2026, 11, 20, 6, 1, 3, tzinfo=UTC),
    }


def test_only_the_gpu_clusters_table_is_read_not_dedicated_inference():
    got = sorted((o["offer_id"], o["gpu_model"], o["usd_per_gpu_hour"], o["usd_per_hour"]) for o in offers(items()))
    assert got == [
        ("gpu-clusters/NVIDIA HGX B200/on_demand", "B200", 8.19, 65.52),
        ("gpu-clusters/NVIDIA HGX H100/on_demand", "H100-SXM", 3.99, 31.92),
    ]
    # The Dedicated Inference table's $5.49 and $8.99 are endpoint prices, not GPU rentals.
    assert not [o for o in offers(items()) if o["price"] in (5.49, 8.99)]
    assert rejected(items()) == []


@pytest.mark.parametrize("cell", ["Contact sales", "Contact us", "", "—"], ids=["contact-sales", "contact-us", "blank", "dash"])
def test_an_on_demand_cell_without_a_price_is_rejected(cell):
    body = BODY.replace(b"<td>$8.19</td>", f"<td>{cell}</td>".encode())
    result = parse_bytes("together", body)
    assert [r["offer_id"] for r in result if isinstance(r, dict)] == ["gpu-clusters/NVIDIA HGX H100/on_demand"]
    [reject] = [r for r in result if not isinstance(r, dict)]
    assert reject.row["Hardware"] == "NVIDIA HGX B200"
    assert reject.reasons[0].startswith("on_demand no_price:")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b"<h2>GPU Clusters</h2>", b"<h2>Clusters</h2>", "no heading 'GPU Clusters'"),
        (b"<th>On-demand</th><th>181+ days</th>", b"<th>Pay as you go</th><th>181+ days</th>", r"no <table> with headers \['Hardware', 'On-demand'\]"),
        (b"All prices per gpu per hour</p>\n  <div class=\"pricing-table-wrap\">\n    <table class=\"pricing-table\">\n      <thead><tr><th>Hardware</th><th>On-demand</th>", b"All prices per node per hour</p>\n  <div class=\"pricing-table-wrap\">\n    <table class=\"pricing-table\">\n      <thead><tr><th>Hardware</th><th>On-demand</th>", "the note 'per gpu per hour' that states the price unit is gone"),
        (b"<tr><td>NVIDIA HGX B200</td><td>$8.19</td>", b"<tr><td>NVIDIA HGX B200</td>", "a row has 2 cells under 3 headers"),
    ],
    ids=["heading-renamed", "header-renamed", "unit-note-changed", "cell-missing"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new)
    assert body != BODY
    with pytest.raises(ParseError, match=message):
        parse_bytes("together", body)


def test_a_table_with_no_rows_fails_instead_of_loading_nothing():
    start = BODY.index(b"<tr><td>NVIDIA HGX H100</td><td>$3.99</td>")
    end = BODY.index(b"</tbody>", start)
    with pytest.raises(ParseError, match="rows: nothing found"):
        parse_bytes("together", BODY[:start] + BODY[end:])


def test_fetch_gets_the_pricing_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    source = together.SOURCE
    [page] = together.fetch(mock_fetcher(source, handler, tmp_path))
    assert seen == [together.URL]
    assert page.path.read_bytes() == BODY
