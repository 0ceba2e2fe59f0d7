"""The shared HTML helpers the pricing-page sources read cells with (scrapers/_html.py)."""

from __future__ import annotations

import io

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers import _html


@pytest.mark.parametrize(
    ("cell", "amount"),
    [
        ("$3.90/GPU-hr", 3.9), ("$2,048.50 / Hour", 2048.5), ("from $0.79", 0.79), ("$ 42", 42.0), ("Contact sales", None), ("", None),
        # near spellings a real page may carry
        ("$2.49/hr", 2.49), ("$2.49 / GPU-hour", 2.49), ("US$2.49", 2.49), ("USD 2.49", 2.49), ("$1,234", 1234.0),
        ("$3.90/GPU-hr\u00b9", 3.9), ("\u00a0$3.90\u00a0", 3.9),
        # a decimal comma is no amount, never 249 dollars; a euro price is not a dollar price
        ("$2,49", None), ("2,49 €", None), ("€2.49", None),
    ],
)
def test_usd_reads_the_first_dollar_amount(cell, amount):
    assert _html.usd(cell) == amount


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("Contact sales", "no_price: 'Contact sales' is a sales contact, not a price"),
        ("Contact us", "no_price: 'Contact us' is a sales contact, not a price"),
        ("", "no_price: blank price cell ''"),
        ("—", "no_price: blank price cell '—'"),
        ("N/A", "no_price: blank price cell 'N/A'"),
        ("Coming soon", "no_price: 'Coming soon' holds no dollar amount"),
        ("$0.00", None),
        ("$3.90/GPU-hr", None),
        ("2,49 €", "no_price: '2,49 €' holds no dollar amount"),
    ],
)
def test_not_a_price_names_why_a_cell_holds_none(cell, reason):
    assert _html.not_a_price(cell) == reason


@pytest.mark.parametrize(("cell", "value"), [("2,048", 2048.0), ("61.44", 61.44), ("8", 8.0), ("—", None), ("8-40", None), ("80 GB", None)])
def test_number_reads_plain_numbers_only(cell, value):
    assert _html.number(cell) == value


def test_tables_are_found_by_their_header_labels_not_their_position():
    doc = _html.page(io.BytesIO(b"<html><body><table><tr><th>A</th></tr></table><table><thead><tr><th>Name</th><th> Price </th></tr></thead><tbody><tr><td>x</td><td>$1</td></tr></tbody></table></body></html>"), "test page")
    headers, rows = _html.table_by_headers(doc, ["price", "NAME"], "test table")
    assert headers == ["Name", "Price"]
    assert [[_html.text(c) for c in row] for row in rows] == [["x", "$1"]]
    with pytest.raises(ParseError, match=r"no <table> with headers \['Cost'\] \(tables seen: \[\['A'\], \['Name', 'Price'\]\]\)"):
        _html.table_by_headers(doc, ["Cost"], "test table")


@pytest.mark.parametrize("body", [b"", b"   ", b"<html><body></body></html>"], ids=["empty", "blank", "no-text"])
def test_an_empty_page_is_a_parse_error(body):
    with pytest.raises(ParseError, match="test page"):
        _html.page(io.BytesIO(body), "test page")


def test_a_page_past_the_html_limit_is_refused_before_parsing(monkeypatch):
    """A 50 MB page took 219 s and 6.6 GB to parse; one past the limit is read no further."""
    import io

    from bs4 import BeautifulSoup

    from gpucat.schemas.errors import ParseError
    from gpucat.scrapers import _html

    def never(*args, **kwargs):
        raise AssertionError("parsed a page past the limit")

    monkeypatch.setattr(_html, "BeautifulSoup", never)
    body = io.BytesIO(b"<html><body><table>" + b"<tr><td>x</td></tr>" * (50 * 10**6 // 20) + b"</table></body></html>")
    with pytest.raises(ParseError, match="over 4,000,000 bytes"):
        _html.page(body, "a huge page")
    assert body.tell() == _html.MAX_HTML_BYTES + 1  # read no further than the limit
    assert BeautifulSoup is not never


def doc(markup: str):
    return _html.page(io.BytesIO(markup.encode()), "test page")


@pytest.mark.parametrize(("markup", "plain"), [("4^1", "4"), ("4<sup>1</sup>", "4"), ("4¹", "4"), ("8", "8"), ("2,048", "2,048")])
def test_own_text_drops_footnote_markers_in_every_form_the_pages_use(markup, plain):
    assert _html.own_text(doc(f"<div id='c'>{markup}</div>").find(id="c")) == plain


def test_text_reads_nbsp_entities_as_spaces():
    assert _html.text(doc("<div id='c'>NVIDIA&nbsp;HGX&nbsp;H100 <span>$2.49&nbsp;/ GPU-hour</span></div>").find(id="c")) == "NVIDIA HGX H100 $2.49 / GPU-hour"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("REGION: NORTH AMERICA", "region:  north america"), ("PRICE/GPU/HR*", "price/gpu/hr"), ("Price(Per Hour)²", "price(per hour)"),
        ("On-Demand\u00a0Price (Per\u00a0Hour)", "on-demand price (per hour)"),  # &nbsp; inside a label
        (" GPU model\n", "gpu MODEL"), ("Current\tspot", "current spot"),
        ("RAM, GB", "RAM (GB)"), ("On-demand, GPU-hour", "On-demand GPU hour"), ("Reserved / 7-30 days", "reserved 7–30 days"),
    ],
)
def test_labels_compare_without_case_whitespace_or_footnote_marks(a, b):
    assert _html.same(a, b)


@pytest.mark.parametrize(("a", "b"), [("On-demand", "Spot"), ("GPU model", "GPU count"), ("RAM, GB", "VRAM, GB")])
def test_different_labels_stay_different(a, b):
    assert not _html.same(a, b)


def test_a_section_runs_from_its_heading_to_the_next_heading_of_the_same_rank_wherever_the_markup_nests_it():
    page = doc("<div><h2>A</h2></div><p>note a</p><div><h3>sub</h3><table id='t'></table></div><h2>B</h2><p>note b</p>")
    nodes = _html.section(_html.heading(page, "a", "test page"))
    assert [n.name for n in nodes] == ["p", "div", "h3", "table"]
    assert _html.section_text(nodes) == "note a sub"


def test_a_two_row_header_with_spans_gives_one_label_per_column_and_wrapped_rows_are_found():
    page = doc(
        "<table><thead><tr><th rowspan='2'>Hardware</th><th>ON-Demand</th><th colspan='2'>Reserved</th></tr>"
        "<tr><th>Pay as you go</th><th>1 week</th><th>1 month</th></tr></thead>"
        "<tbody><div role='list'><div role='listitem'><tr><td>H100</td><td>$3.99</td><td>$3.50</td><td>$3.20</td></tr></div>"
        "<div role='listitem'><tr><td>GB200</td><td>-</td><td colspan='2'>Contact us</td></tr></div></div></tbody></table>"
    )
    headers, rows = _html.table_by_headers(page, ["hardware", "On-demand"], "test table")
    assert headers == ["Hardware", "ON-Demand / Pay as you go", "Reserved / 1 week", "Reserved / 1 month"]
    assert _html.column(headers, "1 month", "test table") == 3
    assert [[_html.text(c) for c in row] for row in rows] == [["H100", "$3.99", "$3.50", "$3.20"], ["GB200", "-", "Contact us", "Contact us"]]


def test_div_grids_cut_rows_with_mobile_cells_down_to_the_header_cells_kind_and_keep_tables_apart():
    def table(region, price):
        return (
            f"<h5>REGION: {region}</h5><div class='t'><div class='g'><div class='c'>Name</div><div class='c'>Price</div></div>"
            f"<div class='g'><div class='c'>X</div><div class='c'>{price}</div><div class='m'>X {price} (mobile)</div></div></div>"
        )

    page = doc(f"<section>{table('ONE', '$1')}{table('TWO', '$2')}</section>")
    grids = _html.grids_by_headers(page.find_all(True), ["name", "PRICE"], "test grid")
    assert [(g.headers, [[_html.text(c) for c in r] for r in g.rows]) for g in grids] == [(["Name", "Price"], [["X", "$1"]]), (["Name", "Price"], [["X", "$2"]])]
    with pytest.raises(ParseError, match=r"2 rows under no header row with labels \['name', 'PRICE'\]"):
        _html.grids_by_headers(doc(f"<section>{table('ONE', '$1')}{table('TWO', '$2').replace('Price', 'Cost')}</section>").find_all(True), ["name", "PRICE"], "test grid")
