"""Together's pricing page, on a real capture (2026-08-22, fixtures/together/together/NOTES.md).

Traps the real markup sets: the heading alone in an accordion toggle with the unit sentence and
the table outside its parent; a two-row header with rowspan and colspans; body rows inside
`div role=listitem` wrappers in <tbody>; a hidden "Hardware | Hourly" duplicate; the Dedicated
Inference lookalike table above; and an H200 row. A changed layout still fails naming what it
missed.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers import together
from tests.scrapers.helpers import by_id, fixture_path, mock_fetcher, offers, parse_bytes, parse_fixture, rejected

FIXTURE = "together/together/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()
VISIBLE = BODY.index(b"On-demand hourly rates and reserved capacity")


def items():
    return parse_fixture("together", FIXTURE)


def after_visible(old: bytes, new: bytes) -> bytes:
    """The body with one replacement made in the visible clusters table only."""
    return BODY[:VISIBLE] + BODY[VISIBLE:].replace(old, new, 1)


def test_whole_record_hgx_h200_cluster_node_the_written_fixture_lacked():
    assert by_id(items())["gpu-clusters/NVIDIA HGX H200/on_demand"] == {
        "table": "offers",
        "provider": "together",
        "offer_id": "gpu-clusters/NVIDIA HGX H200/on_demand",
        "source": "together",
        "instance_type": "NVIDIA HGX H200 cluster node (8 GPUs)",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "NVIDIA HGX H200",
        "gpu_model": "H200-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 141.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 5.99,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 47.92,
        "usd_per_gpu_hour": 5.99,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://www.together.ai/pricing",
        "scraped_at": datetime(2026, 8, 22, tzinfo=UTC),
    }


def test_only_the_on_demand_column_of_the_clusters_table_is_read():
    got = sorted((o["offer_id"], o["gpu_model"], o["usd_per_gpu_hour"], o["usd_per_hour"]) for o in offers(items()))
    assert got == [
        ("gpu-clusters/NVIDIA HGX B200/on_demand", "B200", 8.19, 65.52),
        ("gpu-clusters/NVIDIA HGX H100/on_demand", "H100-SXM", 3.99, 31.92),
        ("gpu-clusters/NVIDIA HGX H200/on_demand", "H200-SXM", 5.99, 47.92),
    ]
    # Never the Dedicated Inference twin ($5.49, $8.99) nor a reservation price ($3.69 ... $6.79).
    assert not [o for o in offers(items()) if o["price"] in (5.49, 8.99, 3.69, 3.45, 3.19, 4.99, 7.99, 6.79)]


def test_the_two_row_header_spans_give_one_label_per_column_and_colspan_cells_fill_theirs():
    assert [(r.row, r.reasons) for r in rejected(items())] == [
        (
            {
                "Hardware": name,
                "ON-Demand / Pay as you go": "—",
                "Reserved / 7-30 days": "Contact us",
                "Reserved / 31-90 days": "Contact us",
                "Reserved / 91-180 days": "Contact us",
                "Reserved / 181+ days": "Contact us",
            },
            ("on_demand no_price: blank price cell '—'",),
        )
        for name in ("NVIDIA GB200 NVL72", "NVIDIA GB300 NVL72", "NVIDIA HGX B300")
    ]


def test_body_rows_inside_list_item_wrappers_are_read():
    # Every <tr> of the clusters table sits in tbody > div > div[role=list] > div[role=listitem].
    assert BODY[VISIBLE:].count(b'<div role="listitem" class="max-width-full w-dyn-item"><tr fs-list-element="item">') == 6
    assert len(offers(items())) + len(rejected(items())) == 6


@pytest.mark.parametrize(
    ("old", "new"),
    [(b"All prices are per GPU per hour.", b"ALL PRICES ARE PER   GPU PER HOUR"), (b">ON-Demand<", b">On-demand<"), (b">ON-Demand<", b">  on-DEMAND <")],
    ids=["unit-note-case", "label-as-docs-write-it", "label-case-and-space"],
)
def test_labels_match_case_and_whitespace_insensitively(old, new):
    body = after_visible(old, new)
    assert body != BODY
    assert sorted(r["offer_id"] for r in parse_bytes("together", body) if isinstance(r, dict)) == sorted(o["offer_id"] for o in offers(items()))


@pytest.mark.parametrize(
    ("cell", "reason"),
    [("Contact us", "'Contact us' is a sales contact, not a price"), ("", "blank price cell ''"), ("Soon", "'Soon' holds no dollar amount")],
    ids=["contact", "blank", "no-amount"],
)
def test_an_on_demand_cell_without_a_price_is_rejected(cell, reason):
    body = after_visible(b">$3.99</p>", f">{cell}</p>".encode())
    result = parse_bytes("together", body)
    assert "gpu-clusters/NVIDIA HGX H100/on_demand" not in [r["offer_id"] for r in result if isinstance(r, dict)]
    [h100] = [r for r in result if not isinstance(r, dict) and r.row["Hardware"] == "NVIDIA HGX H100"]
    assert h100.reasons == (f"on_demand no_price: {reason}",)


@pytest.mark.parametrize("note", ["All prices are per GPU-hour.", "Prices are per GPU, per hour.", "All\u00a0prices are per GPU/hr."])
def test_near_wordings_of_the_unit_note_are_read_as_it(note):
    body = BODY.replace(b"All prices are per GPU per hour.", note.encode())
    assert body != BODY
    assert [r["offer_id"] for r in parse_bytes("together", body) if isinstance(r, dict)] == [o["offer_id"] for o in offers(items())]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b">GPU Clusters</h2>", b">Clusters</h2>", "no heading 'GPU Clusters'"),
        (b"All prices are per GPU per hour.", b"All prices are per node per hour.", "the note 'per gpu per hour' that states the price unit is gone"),
        (b">ON-Demand<", b">Hourly<", r"no <table> with headers \['Hardware', 'On-demand'\]"),
        (b'<td colspan="4" class="text-align-center">', b'<td colspan="3" class="text-align-center">', "a row has 5 cells under 6 headers"),
    ],
    ids=["heading-renamed", "unit-note-gone", "column-renamed", "span-changed"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = after_visible(old, new) if old != b">GPU Clusters</h2>" else BODY.replace(old, new)
    assert body != BODY
    with pytest.raises(ParseError, match=message):
        parse_bytes("together", body)


def test_a_table_with_no_rows_fails_instead_of_loading_nothing():
    start = BODY.index(b'<tbody fs-list-element="list">', VISIBLE)
    end = BODY.index(b"</tbody>", start)
    with pytest.raises(ParseError, match="rows: nothing found"):
        parse_bytes("together", BODY[:start] + b"<tbody>" + BODY[end:])


def test_fetch_gets_the_pricing_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    [page] = together.fetch(mock_fetcher(together.SOURCE, handler, tmp_path))
    assert seen == [together.URL]
    assert page.path.read_bytes() == BODY


def test_a_heading_repeated_in_a_menu_is_passed_over_for_the_one_whose_section_holds_the_table():
    body = b"<nav><h2>GPU Clusters</h2><a href='#gpu-clusters'>See prices</a></nav>" + BODY
    got = sorted(r["offer_id"] for r in parse_bytes("together", body) if isinstance(r, dict))
    assert got == sorted(o["offer_id"] for o in offers(items()))
