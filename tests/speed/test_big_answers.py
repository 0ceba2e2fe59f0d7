"""A marketplace answer larger than the old 64 MB cap loads, parsed as a stream (issue 26)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Rejected
from gpucat.scrapers import _jsonstream, vast_bundles
from tests.conftest import FIXTURES

ON_DEMAND = FIXTURES / "vast" / "vast-bundles" / "bundles-on-demand.json"
FETCHED = datetime(2026, 11, 30, 6, tzinfo=UTC)


def url_for(market: str) -> str:
    return vast_bundles.URL + "?q=" + json.dumps({"type": market})


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_streamed_items_are_exactly_json_loads_items_at_any_chunk_size(monkeypatch, chunk):
    monkeypatch.setattr(_jsonstream, "CHUNK_CHARS", chunk)
    body = ON_DEMAND.read_bytes()
    assert list(_jsonstream.iter_array(io.BytesIO(body), "offers", "Vast response")) == json.loads(body)["offers"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"offers": [{"id": 1}', "not JSON"),
        (b'{"offers": [{"id": 1},]}', "not JSON"),
        (b'{"offers": {"id": 1}}', r"Vast response: lacks offers \(a JSON list\)"),
        (b'{"error": "invalid_request"}', r"Vast response: lacks offers \(a JSON list\)"),
        (b'[{"id": 1}]', "not JSON"),
        (b'{"offers": []} trailing', "extra data"),
        (b"", "not JSON"),
    ],
    ids=["cut", "trailing-comma", "object-not-list", "error-answer", "bare-array", "trailing-data", "empty"],
)
def test_bad_bodies_are_parse_errors(body, message):
    with pytest.raises(ParseError, match=message):
        list(_jsonstream.iter_array(io.BytesIO(body), "offers", "Vast response"))


def test_a_number_cut_at_a_chunk_edge_is_read_whole(monkeypatch):
    monkeypatch.setattr(_jsonstream, "CHUNK_CHARS", 3)
    assert list(_jsonstream.iter_array(io.BytesIO(b'{"offers": [123456789, 1.5e3, "\xc3\xa9t\xc3\xa9"]}'), "offers", "x")) == [123456789, 1500.0, "été"]


def test_a_vast_answer_over_the_old_cap_parses_offer_for_offer_like_the_small_one(tmp_path):
    """Real fixture offers replicated past 64 MB: each copy parses as its original does."""
    real = json.loads(ON_DEMAND.read_text())["offers"]
    per_round = len(",".join(json.dumps(o) for o in real))
    copies = (65 * 10**6 // per_round + 1) * len(real)  # whole rounds of the real offers, past 65 MB
    path = tmp_path / "big.json"
    with path.open("w") as out:
        out.write('{"offers": [' + ",".join(json.dumps(real[i % len(real)]) for i in range(copies)) + "]}")
    assert path.stat().st_size > 64 * 10**6 and vast_bundles.SOURCE.max_response_bytes > path.stat().st_size
    with ON_DEMAND.open("rb") as small:
        one_round = list(vast_bundles.parse(small, url=url_for("on-demand"), fetched_at=FETCHED))
    with path.open("rb") as big:
        items = list(vast_bundles.parse(big, url=url_for("on-demand"), fetched_at=FETCHED))
    assert len(items) == copies
    assert items[: len(one_round)] == one_round and items[-len(one_round) :] == one_round
    assert {type(i) for i in items} == {type(i) for i in one_round} <= {Offer, Rejected}
