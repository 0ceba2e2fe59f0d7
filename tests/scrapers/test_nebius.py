"""Nebius's price page, on a real capture (2026-08-22, fixtures/nebius/nebius/NOTES.md).

The capture holds the page-constructor JSON the page embeds (escaped once, as in its scripts).
Traps: firm preemptible prices beside "from $" ones row by row, "[Contact us](...)" links and
"––" dashes as cells, lookalike CPU/storage tables with "from $" prices. The rendered block form
and an announced price column are exercised on bodies derived from the capture's own cells.
"""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers import nebius
from tests.scrapers.helpers import by_id, fixture_path, mock_fetcher, offers, parse_bytes, parse_fixture, rejected

FIXTURE = "nebius/nebius/prices.html"
BODY = fixture_path(FIXTURE).read_bytes()
LOWER = "price_lower_bound: {!r} is the cheapest of several presets, not one offer's price"
CONTACT = "on_demand no_price: 'Contact us' is a sales contact, not a price"
LINK = re.compile(r"\[([^]]*)\]\([^)]*\)")


def items():
    return parse_fixture("nebius", FIXTURE)


def gpu_table() -> list[list[str]]:
    """The capture's GPU table as its JSON holds it (unescaped once)."""
    text = BODY.decode().replace('\\"', '"')
    start = text.index('{"type":"highlight-table-block","title":"NVIDIA GPU Instances"')
    block, _ = json.JSONDecoder().raw_decode(text, start)
    return block["table"]["content"]


def as_json_body(content: list[list[str]]) -> bytes:
    block = {"type": "highlight-table-block", "title": "NVIDIA GPU Instances", "table": {"content": content}}
    return json.dumps(block, ensure_ascii=False).replace('"', '\\"').encode()


def rendered(content: list[list[str]]) -> bytes:
    """The same table in the rendered block markup public scrapers of the page describe (derived)."""

    def row(cells):
        texts = [html.escape(LINK.sub(r"\1", c)) for c in cells]
        inner = "".join(f'<div class="pc-highlight-table-block__cell"><p>{t}</p></div>' for t in texts)
        return f'<div class="pc-highlight-table-block__row">{inner}</div>'

    head, *body = content
    return (
        '<html><body><div class="pc-highlight-table-block"><h2 class="pc-highlight-table-block__title"><span class="pc-title-item__text">NVIDIA GPU Instances</span></h2>'
        f'<div class="pc-highlight-table-block__head">{row(head)}</div><div class="pc-highlight-table-block__body">{"".join(row(r) for r in body)}</div></div></body></html>'
    ).encode()


def test_whole_record_hgx_h100_preemptible_at_its_firm_price():
    assert by_id(items())["NVIDIA HGX H100/spot"] == {
        "table": "offers",
        "provider": "nebius",
        "offer_id": "NVIDIA HGX H100/spot",
        "source": "nebius",
        "instance_type": "NVIDIA HGX H100, 1 GPU",
        "region": "global",
        "market": "spot",
        "tier": None,
        "gpu_name": "NVIDIA HGX H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 16.0,
        "ram_gb": 200.0,
        "price": 2.15,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 2.15,
        "usd_per_gpu_hour": 2.15,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://nebius.com/prices",
        "scraped_at": datetime(2026, 8, 22, tzinfo=UTC),
    }


def test_every_firm_price_is_an_offer_in_both_markets():
    got = sorted((o["offer_id"], o["gpu_model"], o["price"], o["vcpus"], o["ram_gb"]) for o in offers(items()))
    assert got == [
        ("NVIDIA HGX B200/on_demand", "B200", 7.15, 20.0, 224.0),
        ("NVIDIA HGX B200/spot", "B200", 3.95, 20.0, 224.0),
        ("NVIDIA HGX B300/on_demand", "B300", 7.85, 24.0, 346.0),
        ("NVIDIA HGX B300/spot", "B300", 4.3, 24.0, 346.0),
        ("NVIDIA HGX H100/on_demand", "H100-SXM", 3.85, 16.0, 200.0),
        ("NVIDIA HGX H100/spot", "H100-SXM", 2.15, 16.0, 200.0),
        ("NVIDIA HGX H200/on_demand", "H200-SXM", 4.5, 16.0, 200.0),
        ("NVIDIA HGX H200/spot", "H200-SXM", 2.45, 16.0, 200.0),
        ("NVIDIA RTX PRO 6000/on_demand", "RTX-PRO-6000-AnyEdition", 1.8, 24.0, 218.0),
        ("NVIDIA RTX PRO 6000/spot", "RTX-PRO-6000-AnyEdition", 0.95, 24.0, 218.0),
    ]


def test_from_prices_contact_links_and_dashes_are_rejected_row_by_row():
    assert [(r.row["Item"], r.reasons) for r in rejected(items())] == [
        ("NVIDIA GB300 NVL72", (CONTACT, "spot no_price: blank price cell '––'")),
        ("NVIDIA GB200 NVL72", (CONTACT, "spot no_price: blank price cell '––'")),
        ("NVIDIA L40S with Intel CPU", ("on_demand " + LOWER.format("from $1.82"), "spot " + LOWER.format("from $0.90"))),
        ("NVIDIA L40S with AMD CPU", ("on_demand " + LOWER.format("from $1.55"), "spot " + LOWER.format("from $0.74"))),
    ]
    # The CPU-only table's "from $0.10" and the storage prices are other tables, never read.
    assert not [o for o in offers(items()) if o["price"] in (0.1, 0.05, 0.08)]


def test_a_from_price_in_one_row_leaves_the_firm_prices_of_the_others_alone():
    content = gpu_table()
    content[6][3] = "from $2.15"  # NVIDIA HGX H100's preemptible cell
    got = {r["offer_id"] for r in parse_bytes("nebius", as_json_body(content)) if isinstance(r, dict)}
    assert "NVIDIA HGX H100/spot" not in got and {"NVIDIA HGX H100/on_demand", "NVIDIA HGX H200/spot", "NVIDIA HGX B300/spot"} <= got


def test_the_rendered_blocks_give_the_same_offers_as_the_embedded_json():
    from_json = [r for r in parse_bytes("nebius", BODY)]
    from_html = [r for r in parse_bytes("nebius", rendered(gpu_table()))]
    assert [r for r in from_html if isinstance(r, dict)] == [r for r in from_json if isinstance(r, dict)]
    assert [r.reasons for r in from_html if not isinstance(r, dict)] == [r.reasons for r in from_json if not isinstance(r, dict)]


def test_header_labels_match_case_and_whitespace_insensitively():
    content = gpu_table()
    content[0] = ["ITEM", "vcpus", "RAM,  GB", "preemptible, gpu-hour", "On-Demand, GPU-Hour"]
    assert len([r for r in parse_bytes("nebius", as_json_body(content)) if isinstance(r, dict)]) == 10


def test_header_labels_match_with_other_punctuation():
    content = gpu_table()
    content[0] = ["Item", "vCPUs", "RAM (GB)", "Preemptible (GPU-hour)", "On-demand GPU hour"]
    assert len([r for r in parse_bytes("nebius", as_json_body(content)) if isinstance(r, dict)]) == 10


@pytest.mark.parametrize(("fetched", "h100"), [(datetime(2026, 9, 30, tzinfo=UTC), 3.85), (datetime(2026, 10, 1, tzinfo=UTC), 4.5)], ids=["before", "from-the-date"])
def test_an_announced_price_column_is_the_on_demand_price_from_its_date_on(fetched, h100):
    content = [row[:] for row in gpu_table()]
    content[0].append("GPU-hour (Effective October 1, 2026)")
    for row in content[1:]:
        row.append("$4.50" if row[0] == "NVIDIA HGX H100" else row[4])
    result = [nebius_item.as_row() for nebius_item in nebius.parse(_Bytes(as_json_body(content)), url="u", fetched_at=fetched) if hasattr(nebius_item, "offer_id")]
    prices = {r["offer_id"]: r["price"] for r in result}
    assert prices["NVIDIA HGX H100/on_demand"] == h100
    assert prices["NVIDIA HGX H100/spot"] == 2.15


class _Bytes:
    def __init__(self, raw: bytes):
        self.raw = raw

    def read(self) -> bytes:
        return self.raw


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b'NVIDIA GPU Instances', b"GPU instances", "no table block titled 'NVIDIA GPU Instances'"),
        (b"On-demand, GPU-hour", b"Price per GPU-hour", "no column 'On-demand, GPU-hour'"),
        (b'\\"RAM, GB\\",\\"Preemptible', b'\\"Memory\\",\\"Preemptible', "no column 'RAM, GB'"),
        (b'\\"224\\",', b"", "a row has 4 cells under headers"),
        (b'highlight-table-block', b"table-block", "no highlight-table blocks, rendered or as page-constructor JSON"),
    ],
    ids=["title-renamed", "price-header-renamed", "ram-header-renamed", "cell-missing", "blocks-gone"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new, 1) if old != b"highlight-table-block" else BODY.replace(old, new)
    assert body != BODY
    with pytest.raises(ParseError, match=message):
        parse_bytes("nebius", body)


def test_a_table_with_no_rows_fails_instead_of_loading_nothing():
    with pytest.raises(ParseError, match="rows: nothing found"):
        parse_bytes("nebius", as_json_body(gpu_table()[:1]))


@pytest.mark.parametrize("body", [b"", b"<html></html>", b'{"not": "html"}'], ids=["empty", "no-body", "json"])
def test_a_body_that_is_not_the_page_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("nebius", body)


def test_fetch_gets_the_price_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    [page] = nebius.fetch(mock_fetcher(nebius.SOURCE, handler, tmp_path))
    assert seen == [nebius.URL]
    assert page.path.read_bytes() == BODY


@pytest.mark.parametrize(("fetched", "h100"), [(datetime(2026, 9, 30, tzinfo=UTC), 3.85), (datetime(2026, 10, 2, tzinfo=UTC), 4.5)], ids=["before", "after"])
def test_an_announcement_inside_a_rendered_cell_applies_from_its_date_on(fetched, h100):
    content = [row[:] for row in gpu_table()]
    content[6][4] = "$3.85 $4.50 effective October 1, 2026"  # NVIDIA HGX H100, on-demand
    result = [i.as_row() for i in nebius.parse(_Bytes(rendered(content)), url="u", fetched_at=fetched) if hasattr(i, "offer_id")]
    assert {r["offer_id"]: r["price"] for r in result}["NVIDIA HGX H100/on_demand"] == h100
