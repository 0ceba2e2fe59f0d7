"""The frame around every parser: provenance stamping, record rejections, the JSON reader and paging."""

from __future__ import annotations

import dataclasses
import io
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import FetchError, ParseError
from gpucat.schemas.records import ExchangeRate, Offer, Page, Rejected, Skipped
from gpucat.scrapers import _json, _paging, vultr_plans
from gpucat.scrapers.base import each_record, parse_page, parse_pages
from tests.scrapers.helpers import mock_fetcher

WHEN = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
URL = "https://api.vultr.com/v2/plans"


def _offer(row: dict) -> list[Offer]:
    return [Offer(offer_id=row["id"], instance_type=row["id"], region="global", market="on_demand", gpu_name="L4", gpu_model="L4",
                  gpu_count=1.0, price=float(row["usd"]), price_unit="instance_hour", currency="USD", availability="unknown")]  # fmt: skip


def _source(parse):
    return dataclasses.replace(vultr_plans.SOURCE, parse=parse)


def test_the_frame_stamps_every_record_with_where_and_when_it_was_read():
    def parse(body, *, url, fetched_at):
        yield from each_record("offers", _json.page(body, "test page", "rows"), _offer)
        yield ExchangeRate("EUR", 1.08, WHEN.date())
        yield Skipped("not_gpu: a CPU plan", 1, ("vc2-1c",))

    items = parse_page(_source(parse), io.BytesIO(b'{"rows": [{"id": "a", "usd": 1}]}'), url=URL, fetched_at=WHEN)
    assert items == [
        dataclasses.replace(_offer({"id": "a", "usd": 1})[0], provider="vultr", source="vultr-plans", source_url=URL, scraped_at=WHEN),
        ExchangeRate("EUR", 1.08, WHEN.date(), "vultr-plans", URL, WHEN),
        Skipped("not_gpu: a CPU plan", 1, ("vc2-1c",), URL),
    ]


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"id": "a"}, "malformed_record: missing field 'usd'"),
        ({"id": "a", "usd": "ten"}, "malformed_record: ValueError: could not convert string to float: 'ten'"),
        ({"id": "a", "usd": None}, "malformed_record: TypeError: float() argument must be a string or a real number, not 'NoneType'"),
        ("a plain string", "malformed_record: TypeError: string indices must be integers, not 'str'"),
    ],
    ids=["missing", "not-a-number", "null", "not-an-object"],
)
def test_a_record_the_builder_cannot_read_is_one_rejection_and_the_rest_still_count(row, reason):
    good = {"id": "b", "usd": 2}
    items = list(each_record("offers", [row, good], _offer))
    stored = row if isinstance(row, dict) else {"record": row}
    assert items == [Rejected("offers", (reason,), stored), *_offer(good)]


@pytest.mark.parametrize(
    ("body", "path", "kind", "message"),
    [
        (b'{"rows": [', ("rows",), list, r"^test page: not JSON \(Expecting"),
        (b'{"data": {}}', ("data", "rows"), list, r"^test page: lacks data.rows \(a JSON list; got NoneType\)$"),
        (b'{"rows": {}}', ("rows",), list, r"^test page: lacks rows \(a JSON list; got dict\)$"),
        (b"[]", (), dict, r"^test page: not a JSON object \(got list\)$"),
    ],
    ids=["truncated", "missing", "wrong-kind", "wrong-document"],
)
def test_a_json_page_of_the_wrong_shape_is_one_parse_error_naming_the_page(body, path, kind, message):
    with pytest.raises(ParseError, match=message):
        _json.page(io.BytesIO(body), "test page", *path, kind=kind)


def test_a_json_page_gives_the_part_asked_for():
    assert _json.page(io.BytesIO(b'{"data": {"rows": [1, 2]}}'), "test page", "data", "rows") == [1, 2]


def _walk(tmp_path, answer, strategy, max_pages=5, params=None):
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return httpx.Response(200, json=answer(request, len(asked)))

    fetcher = mock_fetcher(vultr_plans.SOURCE, handler, tmp_path, env={"VULTR_API_KEY": "k"})
    pages = list(_paging.paginate(fetcher, URL, strategy, what="Vultr test list", max_pages=max_pages, params=params))
    return pages, asked


def test_a_cursor_is_sent_back_until_the_api_gives_none(tmp_path):
    answer = lambda request, n: {"meta": {"links": {"next": f"c{n}" if n < 3 else ""}}}  # noqa: E731
    pages, asked = _walk(tmp_path, answer, _paging.Cursor(("meta", "links", "next"), "cursor"), params={"per_page": 2})
    assert asked == [f"{URL}?per_page=2", f"{URL}?per_page=2&cursor=c1", f"{URL}?per_page=2&cursor=c2"]
    assert len(pages) == 3


def test_a_next_link_is_followed_as_given(tmp_path):
    answer = lambda request, n: {"next": f"{URL}?page={n + 1}" if n < 2 else None}  # noqa: E731
    _, asked = _walk(tmp_path, answer, _paging.NextUrl(("next",)), params={"per_page": 2})
    assert asked == [f"{URL}?per_page=2", f"{URL}?page=2"]


def test_numbered_pages_end_at_a_short_one(tmp_path):
    answer = lambda request, n: {"servers": {f"t{n}-{i}": {} for i in range(2 if n < 3 else 1)}}  # noqa: E731
    _, asked = _walk(tmp_path, answer, _paging.PageNumber("page", size=2, items=("servers",)), params={"per_page": 2})
    assert asked == [f"{URL}?per_page=2&page=1", f"{URL}?per_page=2&page=2", f"{URL}?per_page=2&page=3"]


def test_a_page_that_is_not_json_ends_the_walk_for_its_parser_to_report(tmp_path):
    def handler(request):
        return httpx.Response(200, content=b"<html>maintenance</html>")

    fetcher = mock_fetcher(vultr_plans.SOURCE, handler, tmp_path, env={"VULTR_API_KEY": "k"})
    assert len(list(_paging.paginate(fetcher, URL, _paging.Cursor(("next",), "cursor"), what="Vultr test list", max_pages=5))) == 1


def test_reaching_the_page_cap_is_a_fetch_error_that_says_so(tmp_path):
    answer = lambda request, n: {"next": f"c{n}"}  # noqa: E731
    with pytest.raises(FetchError, match="^Vultr test list: still paging after 3 pages; stopped with pages unread"):
        _walk(tmp_path, answer, _paging.Cursor(("next",), "cursor"), max_pages=3)


def test_a_page_linked_twice_is_a_fetch_error_not_a_loop(tmp_path):
    answer = lambda request, n: {"next": "same"}  # noqa: E731
    with pytest.raises(FetchError, match="linked back to a page already read"):
        _walk(tmp_path, answer, _paging.Cursor(("next",), "cursor"))



def test_an_integer_no_column_can_hold_is_rejected_not_a_crash(tmp_path):
    """A provider's 10**20 free GPUs would stop the batch's table from being built (found by the fuzz test)."""
    body = tmp_path / "page.json"
    body.write_bytes(b'{"rows": [{"id": "a", "usd": 1}]}')

    def parse(body, *, url, fetched_at):
        for row in _json.page(body, "test page", "rows"):
            yield dataclasses.replace(_offer(row)[0], available_count=10**20)

    [item] = parse_pages(_source(parse), [Page(URL, WHEN, body)])
    assert isinstance(item, Rejected) and item.reasons == ("out_of_range: available_count: 100000000000000000000 does not fit a 64-bit integer",)
