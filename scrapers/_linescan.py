"""Finding the few lines of a huge quoted CSV that can matter, at close to the speed of reading it.

The AWS all-region price list has ~2M lines, of which a few thousand can become offers. Splitting
every line, decoding it or running the csv module over it costs seconds; CPython's substring search
over raw bytes runs at gigabytes per second. So a `LineFilter` never looks at most lines at all:

1. it searches the raw bytes of a large block for its rarest token (the "anchor") only, and
   touches just the lines that contain it;
2. on those it checks one column by position (TermType, the 4th field: kills the Reserved rows
   that say "OnDemand" in another column) with a regex that reads only the fields before it;
3. then the other tokens, on the line alone.

It is a pre-filter: every line it drops provably fails a test the caller makes again on the parsed
row, so it can drop nothing the caller would keep. A line whose leading fields are not simple
(a comma or quote inside them) is kept and left to the caller's full parse.

A big file is cut at line boundaries into ranges scanned by separate processes (this file run
as a script, stdlib only), each writing its lines to a temporary file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO

BLOCK_BYTES = 8 << 20
# The longest line read (a price list's lines are a few KB): a body that is one endless line (a
# sparse file, a stream without LF) is refused after this many bytes instead of filling memory.
MAX_LINE_BYTES = BLOCK_BYTES
# Below this a second process costs more (interpreter start) than it saves.
BYTES_PER_PROCESS = 256 << 20


@dataclass(frozen=True)
class LineFilter:
    """Keeps lines holding every token whose field number `field_index` is `field_value` (raw, quoted)."""

    tokens: tuple[bytes, ...]  # rarest first: tokens[0] is the anchor searched for
    field_index: int
    field_value: bytes

    def __post_init__(self) -> None:
        simple = rb'(?:"[^",\n]*")?'  # a quoted value without comma, quote or newline, or nothing
        lead = rb"(?:" + simple + rb",){%d}(" % self.field_index + simple + rb")[,\r\n]"
        object.__setattr__(self, "_lead", re.compile(lead))

    def rarest_first(self, sample: bytes) -> LineFilter:
        """The same filter with its tokens ordered by how rarely they occur in `sample`."""
        ordered = tuple(sorted(self.tokens, key=sample.count))
        return LineFilter(ordered, self.field_index, self.field_value)

    def scan(self, buf: bytes | bytearray, end: int) -> list[bytes | bytearray]:
        """Matching lines of `buf[:end]`, which starts at a line start and ends just after a LF."""
        anchor, rest = self.tokens[0], self.tokens[1:]
        find, rfind, lead = buf.find, buf.rfind, self._lead.match  # type: ignore[attr-defined]
        value = self.field_value
        out = []
        i = find(anchor, 0, end)
        while i >= 0:
            start = rfind(b"\n", 0, i) + 1
            stop = find(b"\n", i, end) + 1
            m = lead(buf, start, stop)
            if m is None or m.group(1) == value:  # None: not simple, the caller decides
                line = buf[start:stop]
                for token in rest:
                    if token not in line:
                        break
                else:
                    out.append(line)
            i = find(anchor, stop, end)
        return out


def scan_stream(body: IO[bytes], flt: LineFilter, limit: int | None = None) -> Iterator[bytes | TrailingBytes]:
    """Matching lines from the stream's position, reading at most `limit` bytes (all when None).

    Reads into one reused buffer of MAX_LINE_BYTES (no per-block allocation, never grown); the part
    line at a block's end moves to the front for the next read; a line that fills the buffer raises
    `LineTooLong`, so memory is bounded by what was read, not by the body's size. Yields a final `TrailingBytes` when the range ends in a line
    without LF (a cut file).
    """
    buf = bytearray(MAX_LINE_BYTES)
    have = 0  # bytes carried over at the front of buf
    left = limit
    while left is None or left > 0:
        if have == len(buf):  # one line fills the buffer: memory would grow with what the body declares
            raise LineTooLong(f"a line is longer than {MAX_LINE_BYTES:,} bytes")
        room = len(buf) - have if left is None else min(len(buf) - have, left)
        with memoryview(buf) as view:
            n = body.readinto(view[have : have + room])  # type: ignore[attr-defined]
        if not n:
            break
        if left is not None:
            left -= n
        total = have + n
        end = buf.rfind(b"\n", 0, total) + 1
        yield from map(bytes, flt.scan(buf, end))
        buf[: total - end] = buf[end:total]
        have = total - end
    if have:
        yield TrailingBytes(bytes(buf[:have]))


class LineTooLong(ValueError):
    """A line longer than MAX_LINE_BYTES: not a price list line."""


def read_line(body: IO[bytes], limit: int = MAX_LINE_BYTES) -> bytes:
    """The next line (with its LF; b"" at the end), reading at most `limit` + 1 bytes; longer raises `LineTooLong`."""
    line = body.readline(limit + 1)
    if len(line) > limit:
        raise LineTooLong(f"a line is longer than {limit:,} bytes")
    return line


@dataclass(frozen=True)
class TrailingBytes:
    """The bytes after the last LF of a scanned range."""

    data: bytes


def line_start_at_or_after(body: IO[bytes], offset: int) -> int:
    """The offset of the first line that starts at or after `offset` (file end if none)."""
    if offset == 0:
        return 0
    body.seek(offset - 1)
    pos = offset - 1
    while chunk := body.read(1 << 16):
        i = chunk.find(b"\n")
        if i >= 0:
            return pos + i + 1
        pos += len(chunk)
    return pos


def split_ranges(body: IO[bytes], start: int, size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` byte ranges covering [start, size), each beginning at a line start."""
    cuts = [start] + [line_start_at_or_after(body, start + (size - start) * k // parts) for k in range(1, parts)] + [size]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]


# The parse-process count the caller's settings give (GPUCAT_PARSE_PROCESSES), handed down by the
# frame (`base.parse_pages`) around a parse: a provider's `parse(body, url=..., fetched_at=...)`
# takes no settings, and the count is a resource knob, not part of what a page means.
PROCESSES: ContextVar[int | None] = ContextVar("parse_processes", default=None)


@contextmanager
def processes(count: int | None) -> Iterator[None]:
    """Scan with `count` processes (None: one per CPU that pays) within the block."""
    token = PROCESSES.set(count)
    try:
        yield
    finally:
        PROCESSES.reset(token)


def processes_for(size: int) -> int:
    """How many processes to scan `size` bytes with: the caller's `processes(...)`, else one per CPU that pays."""
    explicit = PROCESSES.get()
    if explicit:
        return explicit
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, size // BYTES_PER_PROCESS, 8))


def scan_file(path: Path, body: IO[bytes], start: int, flt: LineFilter, processes: int) -> Iterator[bytes | TrailingBytes]:
    """Matching lines of the file from `start`, in file order; ranges after the first go to child processes."""
    size = os.path.getsize(path)
    if size > start:  # a cut file fails before any work, as the children skip a cut last line
        body.seek(size - 1)
        if body.read(1) != b"\n":
            body.seek(max(start, size - (1 << 16)))
            yield TrailingBytes(body.read().rsplit(b"\n", 1)[-1])
            return
    ranges = split_ranges(body, start, size, processes)
    children = [_spawn(path, a, b, flt) for a, b in ranges[1:]]
    try:
        body.seek(ranges[0][0] if ranges else size)
        yield from scan_stream(body, flt, (ranges[0][1] - ranges[0][0]) if ranges else 0)
        for proc, out in children:
            if proc.wait() == LINE_TOO_LONG_EXIT:
                raise LineTooLong(f"a line of {path} is longer than {MAX_LINE_BYTES:,} bytes")
            if proc.returncode != 0:
                raise RuntimeError(f"line scan of {path} failed in a child process (exit {proc.returncode})")
            out.seek(0)
            yield from _lines(out)
    finally:
        for proc, out in children:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            out.close()


def _lines(out: IO[bytes]) -> Iterator[bytes | TrailingBytes]:
    carry = b""
    while data := out.read(BLOCK_BYTES):
        buf = carry + data
        lines = buf.split(b"\n")
        carry = lines.pop()
        for line in lines:
            yield line + b"\n"
    if carry:
        yield TrailingBytes(carry)


def _spawn(path: Path, start: int, stop: int, flt: LineFilter) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    out = tempfile.TemporaryFile(prefix="gpucat-scan-")
    # This file alone, stdlib only: -I keeps scrapers/ (and its http.py) off sys.path, -S skips site.
    args = [sys.executable, "-I", "-S", __file__, str(path), str(start), str(stop), str(flt.field_index), flt.field_value.decode(), *(t.decode() for t in flt.tokens)]
    return subprocess.Popen(args, stdout=out), out


def _main(argv: Sequence[str]) -> int:
    """Child process: write the matching lines of one range of a file to stdout."""
    path, start, stop, field_index, field_value, *tokens = argv
    flt = LineFilter(tuple(t.encode() for t in tokens), int(field_index), field_value.encode())
    out = sys.stdout.buffer
    with open(path, "rb") as body:
        body.seek(int(start))
        try:
            for line in scan_stream(body, flt, int(stop) - int(start)):
                if isinstance(line, bytes):  # a trailing cut line is the parent's to report
                    out.write(line)
        except LineTooLong:
            return LINE_TOO_LONG_EXIT
    out.flush()
    return 0


LINE_TOO_LONG_EXIT = 3  # how a child reports `LineTooLong` to its parent


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
