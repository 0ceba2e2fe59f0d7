from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from schemas.errors import ParseError
from scrapers import crusoe
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

FIXTURE = "crusoe/crusoe/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()
CONTACT = "no_price: 'Contact sales' is a sales contact, not a price"


def items():
    return parse_fixture("crusoe", FIXTURE)


def test_whole_record_h100_hgx_on_demand():
    assert by_id(items())["NVIDIA H100 80GB HGX/on_demand"] == {
        "table": "offers",
        "provider": "crusoe",
        "offer_id": "NVIDIA H100 80GB HGX/on_demand",
        "source": "crusoe",
        "instance_type": "NVIDIA H100 80GB HGX, per GPU",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "NVIDIA H100 80GB HGX",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 3.9,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 3.9,
        "usd_per_gpu_hour": 3.9,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://www.crusoe.ai/cloud/pricing",
        "scraped_at": datetime(2026, 11, 20, 6, 1, 2, tzinfo=UTC),
    }


def test_every_offer_with_form_factor_from_the_card_tags():
    got = sorted((o["offer_id"], o["gpu_model"], o["price"]) for o in offers(items()))
    assert got == [
        ("AMD MI300X 192GB/on_demand", "MI300X", 3.45),
        ("NVIDIA A100 80GB PCIe/on_demand", "A100-PCIe-80GB", 2.0),
        ("NVIDIA A100 80GB SXM/on_demand", "A100-SXM4-80GB", 2.3),
        ("NVIDIA H100 80GB HGX/on_demand", "H100-SXM", 3.9),
        ("NVIDIA H200 141GB HGX/on_demand", "H200-SXM", 4.29),
        ("NVIDIA L40S 48GB/on_demand", "L40S", 1.5),
    ]


def test_contact_sales_is_rejected_with_its_reason_never_priced_zero():
    assert [(r.row["name"], r.row["tags"], r.reasons) for r in rejected(items())] == [
        ("NVIDIA GB200", ["186GB", "NVL72"], ("on_demand " + CONTACT, "spot " + CONTACT)),
        ("NVIDIA B200", ["180GB", "HGX"], ("on_demand " + CONTACT, "spot " + CONTACT)),
        ("NVIDIA H200", ["141GB", "HGX"], ("spot " + CONTACT,)),
        ("NVIDIA H100", ["80GB", "HGX"], ("spot " + CONTACT,)),
        ("NVIDIA A100", ["80GB", "SXM"], ("spot " + CONTACT,)),
        ("NVIDIA A100", ["80GB", "PCIe"], ("spot " + CONTACT,)),
        ("NVIDIA L40S", ["48GB"], ("spot " + CONTACT,)),
        ("AMD MI300X", ["192GB"], ("spot " + CONTACT,)),
    ]


@pytest.mark.parametrize(
    ("quote", "reason"),
    [
        ("", "on_demand no_price: blank price cell ''"),
        ("$3.90/hr", "on_demand unexpected_unit: '$3.90/hr' is not priced per GPU-hour"),
        ("$31.20/instance-hr", "on_demand unexpected_unit: '$31.20/instance-hr' is not priced per GPU-hour"),
        ("Coming soon", "on_demand no_price: 'Coming soon' holds no dollar amount"),
    ],
    ids=["blank", "per-hour", "per-instance", "no-amount"],
)
def test_a_price_that_is_not_per_gpu_hour_is_rejected_not_guessed(quote, reason):
    result = parse_bytes("crusoe", BODY.replace(b"<p>$3.90/GPU-hr</p>", f"<p>{quote}</p>".encode()))
    assert "NVIDIA H100 80GB HGX/on_demand" not in [r["offer_id"] for r in result if isinstance(r, dict)]
    [h100] = [r for r in result if not isinstance(r, dict) and r.row["name"] == "NVIDIA H100"]
    assert h100.reasons == (reason, "spot " + CONTACT)


def test_spot_prices_become_spot_offers_when_the_page_has_them():
    body = BODY.replace(b'<div class="pricing-rich w-richtext"><p>$3.90/GPU-hr</p></div>\n        <div class="pricing-rich w-richtext"><p><a href="/contact">Contact sales</a></p></div>', b'<div class="pricing-rich w-richtext"><p>$3.90/GPU-hr</p></div>\n        <div class="pricing-rich w-richtext"><p>$1.60/GPU-hr</p></div>')
    spot = [r for r in parse_bytes("crusoe", body) if isinstance(r, dict) and r["market"] == "spot"]
    assert [(r["offer_id"], r["price"]) for r in spot] == [("NVIDIA H100 80GB HGX/spot", 1.6)]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b'class="pricing_gpu-item', b'class="pricing_card', r"GPU cards \(.pricing_gpu-item\): nothing found"),
        (b'<div class="pricing_gpu-head-cell">Spot</div>', b'<div class="pricing_gpu-head-cell">Reserved</div>', "no header row labelling the columns"),
        (b'<h4 class="pricing-item-heading">NVIDIA H100</h4>', b"<h4>NVIDIA H100</h4>", r"GPU card without a heading \(.pricing-item-heading\)"),
        (b'<div class="pricing-rich w-richtext"><p>$3.90/GPU-hr</p></div>', b"", "has 1 price blocks for columns"),
    ],
    ids=["cards-renamed", "column-label-renamed", "heading-gone", "price-block-gone"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new)
    assert body != BODY
    with pytest.raises(ParseError, match=message):
        parse_bytes("crusoe", body)


def test_fetch_gets_the_pricing_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    source = crusoe.SOURCE
    [page] = crusoe.fetch(mock_fetcher(source, handler, tmp_path))
    assert seen == [crusoe.URL]
    assert page.path.read_bytes() == BODY
