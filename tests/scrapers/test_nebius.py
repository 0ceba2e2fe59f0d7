from __future__ import annotations

import io
from datetime import UTC, datetime

import httpx
import pytest

from schemas.errors import ParseError
from scrapers import nebius
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    plain,
    rejected,
)

FIXTURE = "nebius/nebius/prices.html"
BODY = fixture_path(FIXTURE).read_bytes()


def items():
    return parse_fixture("nebius", FIXTURE)


def parse_on(day: datetime) -> list:
    return [plain(i) for i in nebius.parse(io.BytesIO(BODY), url=nebius.URL, fetched_at=day)]


def test_whole_record_hgx_h100_on_demand_at_the_announced_price():
    assert by_id(items())["NVIDIA HGX H100/on_demand"] == {
        "table": "offers",
        "provider": "nebius",
        "offer_id": "NVIDIA HGX H100/on_demand",
        "source": "nebius",
        "instance_type": "NVIDIA HGX H100, 1 GPU",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "NVIDIA HGX H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 16.0,
        "ram_gb": 200.0,
        "price": 4.5,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 4.5,
        "usd_per_gpu_hour": 4.5,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://nebius.com/prices",
        "scraped_at": datetime(2026, 11, 20, 6, 1, 1, tzinfo=UTC),
    }


def test_every_offer_on_the_page():
    got = sorted((o["offer_id"], o["gpu_model"], o["price"], o["vcpus"], o["ram_gb"]) for o in offers(items()))
    assert got == [
        ("NVIDIA HGX B200/on_demand", "B200", 8.5, 20.0, 224.0),
        ("NVIDIA HGX B300/on_demand", "B300", 9.5, 24.0, 346.0),
        ("NVIDIA HGX H100/on_demand", "H100-SXM", 4.5, 16.0, 200.0),
        ("NVIDIA HGX H200/on_demand", "H200-SXM", 5.4, 16.0, 200.0),
        ("NVIDIA RTX PRO 6000/on_demand", "RTX-PRO-6000", 1.8, 24.0, 218.0),
    ]


@pytest.mark.parametrize(
    ("fetched", "h100", "rtx_pro"),
    [
        (datetime(2026, 9, 30, 23, 59, tzinfo=UTC), 3.85, 1.8),
        (datetime(2026, 10, 1, 0, 0, tzinfo=UTC), 4.5, 1.8),
    ],
    ids=["before-the-change", "on-the-day"],
)
def test_an_announced_price_applies_from_its_date_on(fetched, h100, rtx_pro):
    prices = {r["offer_id"]: r["price"] for r in parse_on(fetched) if isinstance(r, dict)}
    assert (prices["NVIDIA HGX H100/on_demand"], prices["NVIDIA RTX PRO 6000/on_demand"]) == (h100, rtx_pro)


def test_contact_lower_bounds_and_dashes_are_rejected_with_their_reason():
    lower = "price_lower_bound: {!r} is the cheapest of several presets or spot prices, not one offer's price"
    contact = "on_demand no_price: 'Contact us' is a sales contact, not a price"
    assert [(r.row["Item"], r.reasons) for r in rejected(items())] == [
        ("NVIDIA GB300 NVL72", (contact, "spot no_price: blank price cell '—'")),
        ("NVIDIA HGX B300", ("spot " + lower.format("from $0.99"),)),
        ("NVIDIA GB200 NVL72", (contact, "spot no_price: blank price cell '—'")),
        ("NVIDIA HGX B200", ("spot " + lower.format("from $0.99"),)),
        ("NVIDIA HGX H200", ("spot " + lower.format("from $0.79"),)),
        ("NVIDIA HGX H100", ("spot " + lower.format("from $0.79"),)),
        ("NVIDIA RTX PRO 6000", ("spot " + lower.format("from $0.79"),)),
        ("NVIDIA L40S with Intel CPU", ("on_demand " + lower.format("from $1.55"), "spot " + lower.format("from $0.74**"))),
        ("NVIDIA L40S with AMD CPU", ("on_demand " + lower.format("from $1.82"), "spot " + lower.format("from $0.90**"))),
    ]


def test_a_page_without_the_preemptible_column_still_parses_on_demand():
    body = BODY.replace(b'<div class="pc-highlight-table-block__cell">Preemptible, GPU-hour</div>', b"")
    body = body.replace(b'<div class="pc-highlight-table-block__cell">from $0.79</div>', b"").replace(b'<div class="pc-highlight-table-block__cell">from $0.99</div>', b"")
    body = body.replace(b'<div class="pc-highlight-table-block__cell">\xe2\x80\x94</div>', b"").replace(b'<div class="pc-highlight-table-block__cell">from $0.74**</div>', b"").replace(b'<div class="pc-highlight-table-block__cell">from $0.90**</div>', b"")
    assert len([r for r in parse_bytes("nebius", body) if isinstance(r, dict)]) == 5


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b"NVIDIA GPU Instances</span>", b"GPU instances</span>", "no table block titled 'NVIDIA GPU Instances'"),
        (b"On-demand, GPU-hour</div>", b"Price per GPU-hour</div>", "no column 'On-demand, GPU-hour'"),
        (b'<div class="pc-highlight-table-block__cell">RAM, GB</div>', b'<div class="pc-highlight-table-block__cell">Memory</div>', "no column 'RAM, GB'"),
        (b'<div class="pc-highlight-table-block__cell">224</div>', b"", "a row has 4 cells under headers"),
        (b'class="pc-highlight-table-block__head"', b'class="pc-highlight-table-block__header"', r"no header row \(pc-highlight-table-block__head\)"),
    ],
    ids=["title-renamed", "price-header-renamed", "ram-header-renamed", "cell-missing", "head-gone"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new, 1)
    assert body != BODY
    with pytest.raises(ParseError, match=message):
        parse_bytes("nebius", body)


def test_a_table_with_no_rows_fails_instead_of_loading_nothing():
    start = BODY.index(b'<div class="pc-highlight-table-block__body">')
    end = BODY.index(b'<div class="pc-block-base pc-highlight-table-block">', start)
    body = BODY[:start] + b'<div class="pc-highlight-table-block__body"></div></div></div>' + BODY[end:]
    with pytest.raises(ParseError, match="rows: nothing found"):
        parse_bytes("nebius", body)


def test_fetch_gets_the_price_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    source = nebius.SOURCE
    [page] = nebius.fetch(mock_fetcher(source, handler, tmp_path))
    assert seen == [nebius.URL]
    assert page.path.read_bytes() == BODY
