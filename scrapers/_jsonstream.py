"""The items of one array in a large JSON answer, decoded one at a time.

A marketplace answers one search with one JSON object whose array of offers may run to hundreds
of megabytes (Vast: about 1.7 KB per offer, so 100k offers is 170 MB). `json.loads` of such a
body holds the bytes, the text and every offer's dict at once, over a gigabyte. Here the body is
read in chunks and each item is decoded by the standard library's own C scanner
(`JSONDecoder.raw_decode`) as soon as it is complete, so memory holds one chunk and one item;
what the parser keeps of each item is its own affair. No dependency: ijson's fast backend is a
compiled extension, and its pure-Python one is far slower than this.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from typing import IO, Any

from gpucat.schemas.errors import ParseError

CHUNK_CHARS = 1 << 20
# No single item of an array this module streams is anywhere near this big: a body that makes one
# grow past it is not the answer it claims to be (or not JSON at all), and is refused early.
MAX_ITEM_CHARS = 64 * 10**6
_WHITESPACE = " \t\n\r"
_DELIMITERS = _WHITESPACE + ",:]}"
_DECODER = json.JSONDecoder()


class _Text:
    """UTF-8 text of a binary stream, read on demand, with a cursor; consumed text is dropped."""

    def __init__(self, body: IO[bytes], what: str):
        self.body = body
        self.what = what
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self) -> bool:
        if self.eof:
            return False
        raw = self.body.read(CHUNK_CHARS)
        self.eof = not raw
        text = self.decoder.decode(raw, final=self.eof)  # UnicodeDecodeError: the page is not UTF-8
        if self.pos > len(self.buf) // 2:
            self.buf, self.pos = self.buf[self.pos :], 0
        self.buf += text
        if len(self.buf) - self.pos > MAX_ITEM_CHARS:
            raise ParseError(f"{self.what}: holds a value of over {MAX_ITEM_CHARS:,} characters")
        return True

    def peek(self) -> str:
        """The next non-blank character ('' at the end of the body)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise ParseError(f"{self.what}: not JSON (expected {char!r}, found {found or 'the end'!r})")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value, decoded whole (complete: a number is not cut at a chunk's end)."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.more():
                    continue
                raise ParseError(f"{self.what}: not JSON ({exc})") from None
            if (end == len(self.buf) or self.buf[end] not in _DELIMITERS) and self.more():
                continue  # it may go on in the next chunk ("1.5" of "1.5e3"): decode it again with more
            self.pos = end
            return value


def iter_array(body: IO[bytes], key: str, what: str) -> Iterator[Any]:
    """Each item of the array at `key` of the top-level object of `body`, in order.

    Other members are decoded and dropped. A body that is not a JSON object, whose `key` is
    missing or not an array, or that is cut short raises `ParseError` naming `what` (items
    before the fault may already have been yielded: the caller's source fails as a whole).
    """
    text = _Text(body, what)
    text.expect("{")
    found = False
    if text.peek() == "}":
        text.pos += 1
    else:
        while True:
            name = text.value()
            text.expect(":")
            if name == key and not found and text.peek() == "[":
                found = True
                text.pos += 1
                if text.peek() == "]":
                    text.pos += 1
                else:
                    while True:
                        yield text.value()
                        separator = text.peek()
                        text.expect("," if separator == "," else "]")
                        if separator != ",":
                            break
            else:
                text.value()
            separator = text.peek()
            text.expect("," if separator == "," else "}")
            if separator != ",":
                break
    if text.peek() != "":
        raise ParseError(f"{what}: not JSON (extra data after the object)")
    if not found:
        raise ParseError(f"{what}: lacks {key} (a JSON list)")
