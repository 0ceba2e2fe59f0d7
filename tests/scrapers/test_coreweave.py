from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from schemas.errors import ParseError
from scrapers import coreweave
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    normalize_bytes,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

FIXTURE = "coreweave/coreweave/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()


def items():
    return parse_fixture("coreweave", FIXTURE)


def test_whole_record_hgx_h100_on_demand_is_one_eight_gpu_node():
    assert by_id(items())["north-america/NVIDIA HGX H100/on_demand"] == {
        "table": "offers",
        "provider": "coreweave",
        "offer_id": "north-america/NVIDIA HGX H100/on_demand",
        "source": "coreweave",
        "instance_type": "NVIDIA HGX H100",
        "region": "north-america",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "NVIDIA HGX H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 49.24,
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 49.24,
        "usd_per_gpu_hour": 6.155,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://www.coreweave.com/pricing",
        "scraped_at": datetime(2026, 11, 20, 6, 1, tzinfo=UTC),
    }


def test_every_offer_on_the_page_with_per_instance_prices_reconciled_per_gpu():
    got = sorted((o["offer_id"], o["gpu_model"], o["gpu_count"], o["usd_per_hour"], o["usd_per_gpu_hour"]) for o in offers(items()))
    assert got == [
        ("north-america/NVIDIA A100/on_demand", "A100-SXM4-80GB", 8.0, 21.6, 2.7),
        ("north-america/NVIDIA A100/spot", "A100-SXM4-80GB", 8.0, 9.65, 1.20625),
        ("north-america/NVIDIA GB200 NVL72/on_demand", "GB200", 4.0, 42.0, 10.5),
        ("north-america/NVIDIA GH200/on_demand", "GH200", 1.0, 6.5, 6.5),
        ("north-america/NVIDIA HGX B200/on_demand", "B200", 8.0, 68.8, 8.6),
        ("north-america/NVIDIA HGX B200/spot", "B200", 8.0, 34.11, 4.26375),
        ("north-america/NVIDIA HGX B300/spot", "B300", 8.0, 35.84, 4.48),
        ("north-america/NVIDIA HGX H100/on_demand", "H100-SXM", 8.0, 49.24, 6.155),
        ("north-america/NVIDIA HGX H100/spot", "H100-SXM", 8.0, 19.71, 2.46375),
        ("north-america/NVIDIA HGX H200/on_demand", "H200-SXM", 8.0, 50.44, 6.305),
        ("north-america/NVIDIA HGX H200/spot", "H200-SXM", 8.0, 20.93, 2.61625),
        ("north-america/NVIDIA L40/on_demand", "L40", 8.0, 10.0, 1.25),
        ("north-america/NVIDIA L40S/on_demand", "L40S", 8.0, 18.0, 2.25),
        ("north-america/NVIDIA RTX PRO 6000 Blackwell Server Edition/on_demand", "RTX-PRO-6000", 8.0, 20.0, 2.5),
    ]


def test_host_specs_footnotes_and_fabric_come_from_the_page_and_cited_docs():
    ids = by_id(items())
    a100 = ids["north-america/NVIDIA A100/on_demand"]
    assert (a100["vcpus"], a100["ram_gb"], a100["interconnect"], a100["fabric"]) == (128.0, 2048.0, "nvswitch", "infiniband")
    # "4<sup>1</sup>": the footnote marker is not part of the GPU count.
    assert ids["north-america/NVIDIA GB200 NVL72/on_demand"]["gpu_count"] == 4.0
    # A single-GPU node has no intra-node interconnect to speak of.
    assert ids["north-america/NVIDIA GH200/on_demand"]["interconnect"] is None
    # The CPU section's rows (with their own spot prices) are never read.
    assert not [i for i in ids if "Genoa" in i]


def test_contact_sales_is_rejected_per_market_never_a_zero_price():
    assert [(r.reasons, r.row["Instance"]) for r in rejected(items())] == [
        (("on_demand no_price: 'Contact sales' is a sales contact, not a price",), "NVIDIA GB300 NVL72"),
        (("on_demand no_price: 'Contact sales' is a sales contact, not a price",), "NVIDIA HGX B300"),
    ]
    assert all(o["price"] > 0 for o in offers(items()))


H100_PRICE = '<div class="table-price">$49.24</div>'


@pytest.mark.parametrize("cell", ["", "—", "Contact us", "Call"], ids=["blank", "dash", "contact-us", "no-amount"])
def test_a_price_cell_without_a_price_rejects_that_market(cell):
    result = parse_bytes("coreweave", BODY.replace(H100_PRICE.encode(), f'<div class="table-price">{cell}</div>'.encode()))
    ids = [r["offer_id"] for r in result if isinstance(r, dict)]
    assert "north-america/NVIDIA HGX H100/on_demand" not in ids
    assert "north-america/NVIDIA HGX H100/spot" in ids
    assert any(r.row["Instance"] == "NVIDIA HGX H100" for r in result if not isinstance(r, dict))


def test_an_unknown_a100_memory_maps_to_no_model_and_is_rejected_by_normalization():
    body = BODY.replace(b'NVIDIA A100</h3></div>\n              <div class="table-v2-cell">8</div>\n              <div class="table-v2-cell">80<', b'NVIDIA A100</h3></div>\n              <div class="table-v2-cell">8</div>\n              <div class="table-v2-cell">40<')
    result = normalize_bytes("coreweave", body)
    assert [r.reasons for r in result if not isinstance(r, dict) and r.row.get("gpu_name") == "NVIDIA A100"] == [("unknown_gpu: 'NVIDIA A100'",)] * 2


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b"On-demand GPU instances</h2>", b"GPU instances</h2>", "no heading 'On-demand GPU instances'"),
        (b'<div class="table-v2-cell">GPU Count</div>', b'<div class="table-v2-cell">GPUs</div>', r"no header row with labels \['GPU Count'"),
        (b"Instance Price Per Hour</div>\n", b"Price</div>\n", r"no header row with labels .*'Instance Price Per Hour'"),
        (b"VRAM (GB)</div>", b"GPU Memory</div>", "no column 'VRAM \\(GB\\)'"),
        (b"Region: North America", b"North America", "no 'Region: ...' label"),
        (b'<div class="table-v2-cell">30.72</div>', b"", "a row has 6 cells under 7 headers"),
        (b"<body>", b"<body><!-- empty -->", None),
    ],
    ids=["heading-renamed", "count-header-renamed", "price-header-renamed", "vram-header-renamed", "region-label-gone", "cell-missing", "control"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new)
    assert body != BODY
    if message is None:
        assert parse_bytes("coreweave", body)
        return
    with pytest.raises(ParseError, match=message):
        parse_bytes("coreweave", body)


def test_a_table_with_no_rows_fails_instead_of_loading_nothing():
    start, end = BODY.index(b'<div class="w-dyn-items" role="list">'), BODY.index(b'<div class="pricing-footnote">')
    with pytest.raises(ParseError, match="rows: nothing found"):
        parse_bytes("coreweave", BODY[:start] + b"</div></div>" + BODY[end:])


@pytest.mark.parametrize("body", [b"", b"<html></html>", b'{"not": "html"}'], ids=["empty", "no-body", "json"])
def test_a_body_that_is_not_the_page_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("coreweave", body)


def test_fetch_gets_the_pricing_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    source = coreweave.SOURCE
    [page] = coreweave.fetch(mock_fetcher(source, handler, tmp_path))
    assert seen == [coreweave.URL]
    assert page.path.read_bytes() == BODY
