"""CoreWeave's pricing page, on a real capture (2026-08-22, fixtures/coreweave/coreweave/NOTES.md).

One test per trap the real markup sets: labels and tables outside the heading's parent, an
upper-case region label, several region tables, separate on-demand and spot columns, rows with
more cells than headers (mobile layout), footnote markers on counts, and a CPU section that reuses
the GPU grid. A changed layout still fails naming what it missed.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import coreweave
from tests.scrapers.helpers import by_id, fixture_path, mock_fetcher, normalize_bytes, offers, parse_bytes, parse_fixture, rejected, skipped

FIXTURE = "coreweave/coreweave/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()
EUROPE = BODY.index(b"REGION: EUROPE")


def items():
    return parse_fixture("coreweave", FIXTURE)


def offer_ids(body: bytes) -> dict[str, float]:
    return {r["offer_id"]: r["price"] for r in parse_bytes("coreweave", body) if isinstance(r, dict)}


def test_whole_record_europe_hgx_h100_spot_from_the_europe_table_spot_column():
    assert by_id(items())["europe/NVIDIA HGX H100/spot"] == {
        "table": "offers",
        "provider": "coreweave",
        "offer_id": "europe/NVIDIA HGX H100/spot",
        "source": "coreweave",
        "instance_type": "NVIDIA HGX H100",
        "region": "europe",
        "market": "spot",
        "tier": None,
        "gpu_name": "NVIDIA HGX H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 128.0,
        "ram_gb": 2048.0,
        "price": 19.51,
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 19.51,
        "usd_per_gpu_hour": 2.43875,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://www.coreweave.com/pricing",
        "scraped_at": datetime(2026, 8, 22, tzinfo=UTC),
    }


def test_every_offer_of_both_region_tables_with_node_prices_reconciled_per_gpu():
    got = sorted((o["offer_id"], o["gpu_model"], o["gpu_count"], o["usd_per_hour"], o["usd_per_gpu_hour"]) for o in offers(items()))
    assert got == [
        ("europe/NVIDIA A100/on_demand", "A100-SXM4-80GB", 8.0, 21.6, 2.7),
        ("europe/NVIDIA A100/spot", "A100-SXM4-80GB", 8.0, 9.51, 1.18875),
        ("europe/NVIDIA GB200 NVL72/on_demand", "GB200", 4.0, 42.0, 10.5),
        ("europe/NVIDIA GH200/on_demand", "GH200", 1.0, 6.5, 6.5),
        ("europe/NVIDIA HGX B200/on_demand", "B200", 8.0, 68.8, 8.6),
        ("europe/NVIDIA HGX B200/spot", "B200", 8.0, 34.87, 4.35875),
        ("europe/NVIDIA HGX B300/spot", "B300", 8.0, 36.7, 4.5875),
        ("europe/NVIDIA HGX H100/on_demand", "H100-SXM", 8.0, 49.24, 6.155),
        ("europe/NVIDIA HGX H100/spot", "H100-SXM", 8.0, 19.51, 2.43875),
        ("europe/NVIDIA HGX H200/on_demand", "H200-SXM", 8.0, 50.44, 6.305),
        ("europe/NVIDIA HGX H200/spot", "H200-SXM", 8.0, 20.64, 2.58),
        ("europe/NVIDIA L40/on_demand", "L40", 8.0, 10.0, 1.25),
        ("europe/NVIDIA L40S/on_demand", "L40S", 8.0, 18.0, 2.25),
        ("europe/NVIDIA RTX PRO 6000 Blackwell Server Edition/on_demand", "RTX-PRO-6000-Server", 8.0, 20.0, 2.5),
        ("europe/NVIDIA RTX PRO 6000 Blackwell Server Edition/spot", "RTX-PRO-6000-Server", 8.0, 11.01, 1.37625),
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
        ("north-america/NVIDIA L40/spot", "L40", 8.0, 6.27, 0.78375),
        ("north-america/NVIDIA L40S/on_demand", "L40S", 8.0, 18.0, 2.25),
        ("north-america/NVIDIA L40S/spot", "L40S", 8.0, 7.88, 0.985),
        ("north-america/NVIDIA RTX PRO 6000 Blackwell Server Edition/on_demand", "RTX-PRO-6000-Server", 8.0, 20.0, 2.5),
        ("north-america/NVIDIA RTX PRO 6000 Blackwell Server Edition/spot", "RTX-PRO-6000-Server", 8.0, 11.09, 1.38625),
    ]


@pytest.mark.parametrize(
    "label",
    [b"REGION: EUROPE", b"Region: Europe", b"region :  europe", b"REGION:\n\tEUROPE"],
    ids=["upper-as-served", "title-case", "lower-spaced", "line-broken"],
)
def test_region_labels_match_case_and_whitespace_insensitively_and_name_each_table(label):
    got = offer_ids(BODY.replace(b"REGION: EUROPE", label))
    assert got["europe/NVIDIA HGX B300/spot"] == 36.7
    assert got["north-america/NVIDIA HGX B300/spot"] == 35.84
    assert len(got) == 32


def test_spot_is_its_own_column_and_na_means_no_spot_market_counted_not_rejected():
    got = items()
    ids = by_id(got)
    # HGX B300: on-demand by contact, spot priced in its own column.
    assert "north-america/NVIDIA HGX B300/on_demand" not in ids
    assert ids["north-america/NVIDIA HGX B300/spot"]["price"] == 35.84
    # The inference column (footnote 2: inference-platform customers only) is never a market.
    assert not [o for o in offers(got) if o["price"] in (8.6, 6.16, 10.5) and o["gpu_count"] > 1]
    assert skipped(got) == {"no_spot_market: the spot column reads 'N/A'": 8}


def test_contact_sales_rejects_only_that_market_never_a_zero_price():
    assert [(r.reasons, r.row["GPU Model"], r.row["region"]) for r in rejected(items())] == [
        (("on_demand no_price: 'Contact sales' is a sales contact, not a price",), "NVIDIA GB300 NVL72", "NORTH AMERICA"),
        (("on_demand no_price: 'Contact sales' is a sales contact, not a price",), "NVIDIA HGX B300", "NORTH AMERICA"),
        (("on_demand no_price: 'Contact sales' is a sales contact, not a price",), "NVIDIA GB300 NVL72", "EUROPE"),
        (("on_demand no_price: 'Contact sales' is a sales contact, not a price",), "NVIDIA HGX B300", "EUROPE"),
    ]
    assert all(o["price"] > 0 for o in offers(items()))


MOBILE_H100_PRICE = b'<span class="instance-price">On-Demand Price: <span class="item-value">$49.24</span>'


def test_the_mobile_layout_cells_beyond_the_headers_are_never_read():
    # Each row carries 11 (North America) or 10 (Europe) cells under 9 or 8 headers; a different
    # figure in the mobile copy of the H100 price changes nothing.
    assert BODY.count(b'class="table-cell-column table-cell-column-left"') == 23
    body = BODY.replace(MOBILE_H100_PRICE, b'<span class="instance-price">On-Demand Price: <span class="item-value">$99.99</span>', 1)
    assert body != BODY
    assert offer_ids(body) == offer_ids(BODY)


@pytest.mark.parametrize(
    "count",
    [b"<div>4^1</div>", b"<div>4<sup>1</sup></div>", "<div>4¹</div>".encode(), b"<div>4 <sup>1</sup></div>"],
    ids=["caret-as-served", "sup-as-the-page-script-renders-it", "superscript-digit", "spaced-sup"],
)
def test_footnote_markers_are_not_part_of_the_gpu_count(count):
    body = BODY.replace(b'<div class="table-v2-cell"><div>4^1</div></div>', b'<div class="table-v2-cell">' + count + b"</div>")
    assert (body == BODY) == (count == b"<div>4^1</div>")
    got = [r for r in parse_bytes("coreweave", body) if isinstance(r, dict) and "GB200" in r["offer_id"]]
    assert [(r["offer_id"], r["gpu_count"], r["price"]) for r in got] == [
        ("north-america/NVIDIA GB200 NVL72/on_demand", 4.0, 42.0),
        ("europe/NVIDIA GB200 NVL72/on_demand", 4.0, 42.0),
    ]


def test_the_cpu_section_with_the_same_grid_and_region_label_is_never_read():
    assert BODY.count(b"REGION: NORTH AMERICA") == 2 and b"AMD Genoa" in BODY
    assert not [o for o in offers(items()) if "Genoa" in o["offer_id"] or o["price"] in (6.42, 3.5)]


@pytest.mark.parametrize(
    ("spelling", "model"),
    [
        ("NVIDIA H100 SXM5 80GB", "H100-SXM"), ("nvidia hgx h100", "H100-SXM"), ("NVIDIA&nbsp;HGX&nbsp;H100", "H100-SXM"),
        ("NVIDIA DGX H100", "H100-SXM"), ("NVIDIA H100 80GB HBM3", "H100-SXM"), ("NVIDIA HGX H100 (80GB)", "H100-SXM"),
    ],
)
def test_a_respelled_gpu_the_table_lacks_maps_through_the_rules_in_normalization(spelling, model):
    """The real page's names are reviewed in a table; a capture that spells one otherwise (case,
    &nbsp;, a form factor or memory added) still maps, through the shared rules."""
    body = BODY.replace(b"NVIDIA HGX H100", spelling.encode())
    assert body != BODY
    result = normalize_bytes("coreweave", body)
    got = {r["gpu_model"] for r in result if isinstance(r, dict) and r["gpu_name"].replace("\u00a0", " ") == spelling.replace("&nbsp;", " ")}
    assert got == {model}
    assert not [r for r in result if isinstance(r, Rejected) and any(x.startswith(("unknown_gpu", "ambiguous_gpu")) for x in r.reasons)]


def test_an_a100_memory_the_table_lacks_goes_to_the_rules_in_normalization():
    body = BODY.replace(b'NVIDIA A100</h3>\n\t</div>\n\t<div class="table-v2-cell"><div>8</div></div>\n  <div class="table-v2-cell"><div>80</div>', b'NVIDIA A100</h3>\n\t</div>\n\t<div class="table-v2-cell"><div>8</div></div>\n  <div class="table-v2-cell"><div>40</div>', 1)
    assert body != BODY
    result = normalize_bytes("coreweave", body)
    # 40 GB settles the memory, not SXM4 or PCIe: the stand-in, whose form factor is "Unstated"
    assert [r.reasons for r in result if isinstance(r, Rejected) and r.row.get("gpu_name") == "NVIDIA A100"] == []
    assert {(o["gpu_model"], o["gpu_memory_gb"]) for o in result if isinstance(o, dict) and o.get("gpu_name") == "NVIDIA A100"} == {
        ("A100-40GB-AnyForm", 40.0), ("A100-SXM4-80GB", 80.0),  # the other region's 80 GB row, in the reviewed table
    }


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b"On-demand GPU instances</h2>", b"GPU instances</h2>", "no heading 'On-demand GPU instances'"),
        (b'"table-header-text">GPU Count</div>', b'"table-header-text">GPUs</div>', r"no header row with labels \['GPU Model', 'GPU Count'"),
        (b'"table-header-text">On-Demand Price (Per Hour)</div>', b'"table-header-text">Price</div>', r"no header row with labels .*'On-Demand Price \(Per Hour\)'"),
        (b'"table-header-text">VRAM (GB)</div>', b'"table-header-text">GPU Memory</div>', r"no column 'VRAM \(GB\)'"),
        (b'<h5><strong class="eyebrow">REGION: NORTH AMERICA</strong></h5><div class="table-v2 gpu-pricing">', b'<div class="table-v2 gpu-pricing">', "no 'Region: ...' label before the table"),
        (b'<div class="table-v2-cell"><div>30.72</div></div>', b"", "a row has 8 cells under 9 headers"),
        (b"</header>", b"</header><!-- a comment -->", None),
    ],
    ids=["heading-renamed", "count-header-renamed", "price-header-renamed", "vram-header-renamed", "region-label-gone", "cell-missing", "control"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new, 1)
    assert body != BODY
    if message is None:
        assert offer_ids(body) == offer_ids(BODY)
        return
    with pytest.raises(ParseError, match=message):
        parse_bytes("coreweave", body)


def test_a_table_with_no_rows_fails_instead_of_loading_nothing():
    start = BODY.index(b'<div role="list" class="w-dyn-items">', EUROPE)
    end = BODY.index(b'<div class="table-v2-footer-text-container">', EUROPE)
    with pytest.raises(ParseError, match="EUROPE rows: nothing found"):
        parse_bytes("coreweave", BODY[:start] + b"</div>" + BODY[end:])


@pytest.mark.parametrize("body", [b"", b"<html></html>", b'{"not": "html"}'], ids=["empty", "no-body", "json"])
def test_a_body_that_is_not_the_page_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("coreweave", body)


def test_fetch_gets_the_pricing_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    [page] = coreweave.fetch(mock_fetcher(coreweave.SOURCE, handler, tmp_path))
    assert seen == [coreweave.URL]
    assert page.path.read_bytes() == BODY


def test_a_heading_repeated_in_a_menu_is_passed_over_for_the_one_whose_section_holds_the_tables():
    body = b"<nav><h2>On-demand GPU instances</h2><a href='#gpu'>GPU</a></nav>" + BODY
    assert offer_ids(body) == offer_ids(BODY)
