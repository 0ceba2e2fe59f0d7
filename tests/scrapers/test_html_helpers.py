"""The shared HTML helpers the pricing-page sources read cells with (scrapers/_html.py)."""

from __future__ import annotations

import io

import pytest

from schemas.errors import ParseError
from scrapers import _html


@pytest.mark.parametrize(
    ("cell", "amount"),
    [("$3.90/GPU-hr", 3.9), ("$2,048.50 / Hour", 2048.5), ("from $0.79", 0.79), ("$ 42", 42.0), ("Contact sales", None), ("", None)],
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

    from schemas.errors import ParseError
    from scrapers import _html

    def never(*args, **kwargs):
        raise AssertionError("parsed a page past the limit")

    monkeypatch.setattr(_html, "BeautifulSoup", never)
    body = io.BytesIO(b"<html><body><table>" + b"<tr><td>x</td></tr>" * (50 * 10**6 // 20) + b"</table></body></html>")
    with pytest.raises(ParseError, match="over 4,000,000 bytes"):
        _html.page(body, "a huge page")
    assert body.tell() == _html.MAX_HTML_BYTES + 1  # read no further than the limit
    assert BeautifulSoup is not never
