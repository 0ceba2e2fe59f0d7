"""The raw-byte line pre-filter: it may keep too much, never too little, in one process or several."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers import _linescan, aws_pricelist
from tests.conftest import FIXTURES

FLT = _linescan.LineFilter((b'"Linux"', b'"Used"'), 1, b'"OnDemand"')


def scan(text: bytes) -> list[bytes | _linescan.TrailingBytes]:
    return list(_linescan.scan_stream(io.BytesIO(text), FLT))


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        (b'"A","OnDemand","Linux","Used"\n', True),
        (b'"A","Reserved","Linux","Used"\n', False),  # the positional field says no
        (b'"A","Reserved","OnDemand","Linux","Used"\n', False),  # "OnDemand" elsewhere is not TermType
        (b'"A","OnDemand","Windows","Used"\n', False),  # a token is missing
        (b'"A,B","Reserved","Linux","Used"\n', True),  # leading field not simple: left to the full parse
        (b',"OnDemand","Linux","Used"\n', True),  # empty leading field
        (b'"A","OnDemand","Linux","Used"', False),  # no line end: not a line
    ],
)
def test_a_line_is_kept_when_it_can_pass(line, kept):
    found = [x for x in scan(line) if isinstance(x, bytes)]
    assert found == ([line] if kept else [])


def test_a_cut_last_line_is_reported():
    assert scan(b'"A","OnDemand","Linux","Used"\n"B","On')[-1] == _linescan.TrailingBytes(b'"B","On')


def test_lines_longer_than_the_buffer(monkeypatch):
    monkeypatch.setattr(_linescan, "BLOCK_BYTES", 16)
    line = b'"A","OnDemand","' + b"x" * 100 + b'","Linux","Used"\n'
    assert scan(line * 3) == [line] * 3


def test_rarest_token_is_searched_first():
    sample = b'"Used","Used","Linux"'
    assert FLT.rarest_first(sample).tokens == (b'"Linux"', b'"Used"')


def test_ranges_start_at_line_starts(tmp_path):
    body = b"".join(b"line %d\n" % i for i in range(1000))
    with io.BytesIO(body) as f:
        ranges = _linescan.split_ranges(f, 0, len(body), 3)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(body)
    assert all(body[a - 1 : a] == b"\n" for a, _ in ranges[1:])
    assert [a for a, _ in ranges[1:]] == [b for _, b in ranges[:-1]]


def parse_file(path: Path) -> list:
    with path.open("rb") as body:
        return list(aws_pricelist.parse(body, url="https://example.invalid/x", fetched_at=datetime(2026, 1, 1, tzinfo=UTC)))


def test_child_processes_give_the_same_items_in_the_same_order():
    path = FIXTURES / "aws/aws-pricelist/us-east-1.csv"
    one = parse_file(path)
    with _linescan.processes(3):
        assert parse_file(path) == one
    assert len(one) > 10


def test_a_cut_file_fails_across_processes(tmp_path):
    cut = tmp_path / "cut.csv"
    cut.write_bytes((FIXTURES / "aws/aws-pricelist/us-east-1.csv").read_bytes()[:-30])
    with _linescan.processes(2), pytest.raises(ParseError, match="truncated"):
        parse_file(cut)
