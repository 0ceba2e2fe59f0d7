"""A body costs what is read, not what it declares: an endless line or an oversized index is refused
after a bounded read (the 2 GB sparse body on aws-pricelist once peaked at 4.5 GB).

`Endless` is a body of a header and then zero bytes without end (a sparse file as a parser sees it)
that counts the bytes handed out; each refusal is checked against how much it read.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Page
from gpucat.schemas.settings import Settings
from gpucat.scrapers import _linescan, aws_pricelist, aws_terms
from gpucat.scrapers.base import read_at_most
from tests.conftest import FIXTURES

WHEN = datetime(2026, 11, 20, tzinfo=UTC)


class Endless:
    """`head`, then zero bytes for ever; `handed` counts every byte returned by a read."""

    def __init__(self, head: bytes = b""):
        self.head, self.pos, self.handed = head, 0, 0

    def _take(self, n: int) -> bytes:
        assert n >= 0, "an unbounded read of an endless body"
        head = self.head[self.pos : self.pos + n]
        out = head + bytes(n - len(head))
        self.pos += n
        self.handed += n
        return out

    def read(self, n: int = -1) -> bytes:
        return self._take(n)

    def readline(self, limit: int = -1) -> bytes:
        assert limit >= 0, "an unbounded readline of an endless body"
        rest = self.head[self.pos :]
        cut = rest.find(b"\n", 0, limit)
        return self._take(cut + 1 if cut >= 0 else limit)

    def readinto(self, view) -> int:
        view[:] = self._take(len(view))
        return len(view)

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int) -> None:
        self.pos = pos


def preamble(fixture: Path) -> bytes:
    """A real price list's lines up to and including its SKU header."""
    lines = []
    with fixture.open("rb") as fh:
        for line in fh:
            lines.append(line)
            if line.startswith(b'"SKU"'):
                return b"".join(lines)
    raise AssertionError(f"{fixture} has no SKU header")


PRICELIST = preamble(FIXTURES / "aws" / "aws-pricelist" / "us-east-1.csv")
TERMS = preamble(FIXTURES / "aws" / "aws-terms" / "us-east-1-ec2.csv")


@pytest.mark.parametrize("cap", [0, 1, 4096])
def test_read_at_most_refuses_a_bigger_body_having_read_cap_plus_one(cap):
    body = Endless()
    with pytest.raises(ParseError, match=f"the thing is larger than {cap:,} bytes"):
        read_at_most(body, cap, "the thing")
    assert body.handed == cap + 1


@pytest.mark.parametrize("size", [0, 1, 4096])
def test_read_at_most_returns_a_body_within_the_cap(tmp_path, size):
    path = tmp_path / "body"
    path.write_bytes(b"x" * size)
    with path.open("rb") as fh:
        assert read_at_most(fh, 4096, "the thing") == b"x" * size


@pytest.mark.parametrize("limit", [1, 10, 1 << 20])
def test_read_line_refuses_a_longer_line_having_read_limit_plus_one(limit):
    body = Endless()
    with pytest.raises(_linescan.LineTooLong, match=f"longer than {limit:,} bytes"):
        _linescan.read_line(body, limit)
    assert body.handed == limit + 1


def test_read_line_reads_a_line_within_the_limit():
    body = Endless(b'"SKU","A"\nrest')
    assert _linescan.read_line(body, 10) == b'"SKU","A"\n'
    assert body.handed == 10


@pytest.mark.parametrize("head", [b"", b'"A","OnDemand","Linux","Used"\n'], ids=["no-line-end", "a-line-then-none"])
def test_scan_stream_refuses_an_endless_line_after_one_buffer(head):
    body = Endless(head)
    flt = _linescan.LineFilter((b'"Linux"',), 1, b'"OnDemand"')
    with pytest.raises(_linescan.LineTooLong):
        list(_linescan.scan_stream(body, flt))
    assert body.handed <= len(head) + _linescan.MAX_LINE_BYTES


@pytest.mark.parametrize(
    ("parse", "head", "message"),
    [
        (aws_pricelist.parse, b"", "a line is longer than"),  # no header: the first line never ends
        (aws_pricelist.parse, PRICELIST, "a line is longer than"),  # the header, then a hole
        (aws_terms.parse, b"", "a line is longer than"),
        (aws_terms.parse, TERMS, "a line is longer than"),
    ],
    ids=["pricelist-hole", "pricelist-header-then-hole", "terms-hole", "terms-header-then-hole"],
)
def test_a_price_list_that_never_ends_a_line_is_refused_after_a_bounded_read(parse, head, message):
    body = Endless(head)
    with pytest.raises(ParseError, match=message):
        list(parse(body, url="https://pricing.us-east-1.amazonaws.com/x/index.csv", fetched_at=WHEN))
    # the header, the sample that orders the filter's tokens (read again after it), one line buffer
    assert body.handed <= len(head) + _linescan.BLOCK_BYTES + _linescan.MAX_LINE_BYTES + 1


def sparse(path: Path, head: bytes, size: int, tail: bytes = b"") -> Path:
    path.write_bytes(head)
    os.truncate(path, size - len(tail))
    with path.open("ab") as fh:
        fh.write(tail)
    return path


def test_a_sparse_file_ending_in_a_line_end_is_refused_by_a_child_process(tmp_path):
    """The file ends in LF, so the cut-line check passes; its first half is short lines (scanned in
    this process), its second half one endless line the child process scanning it reports by its exit code."""
    head = PRICELIST + b'"x"\n' * ((12 << 20) // 4)
    path = sparse(tmp_path / "index.csv", head, len(head) + _linescan.MAX_LINE_BYTES + (1 << 20), b"\n")
    with _linescan.processes(2), path.open("rb") as body, pytest.raises(ParseError, match="a line of .* is longer than"):
        list(aws_pricelist.parse(body, url="https://pricing.us-east-1.amazonaws.com/x/index.csv", fetched_at=WHEN))


def test_an_oversized_region_index_is_refused_before_it_is_parsed(tmp_path):
    path = sparse(tmp_path / "region_index.json", b'{"regions": {', 10**10)  # 10 GB declared, nothing on disk

    class OneIndex:
        settings = Settings()

        def get(self, url: str) -> Page:
            assert url == aws_pricelist.REGION_INDEX_URL
            return Page(url=url, fetched_at=WHEN, path=path)

    with pytest.raises(ParseError, match=f"AWS region index is larger than {aws_pricelist.REGION_INDEX_MAX_BYTES:,} bytes"):
        list(aws_pricelist.fetch(OneIndex()))
