"""Conditional fetch: ask a provider "changed since the last good run?" before downloading.

The evidence comes from the last successful run of the source (the warehouse keeps it):

- The HTTP tokens of the run's first request: its ETag goes back as If-None-Match, its
  Last-Modified as If-Modified-Since. They are sent only when that run made exactly one request,
  because then that one response determined everything the source loaded, and a 304 means
  nothing changed. Sources that walk several pages fetch in full.
- The provider's own version: a source that reads one (AWS names a versioned file per region in
  its region index) reports it with `fetcher.version(...)`; the same version ends the fetch.

Both are tied to `code_version()`: new parsers or new reference data read everything once more,
so a fix to a parser reaches the data without waiting for the provider to publish.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
# Code and data that turn a body into rows: a change to any of them invalidates every stored token.
_CODE_DIRS = ("scrapers", "schemas")


class SourceUnchanged(Exception):
    """The provider says nothing changed since the last good run: nothing to download or parse."""

    def __init__(self, message: str, checked_at: datetime):
        super().__init__(message)
        self.checked_at = checked_at


@dataclass(frozen=True)
class FetchTokens:
    """What a successful run saw (its conditional-fetch tokens), to make the next run's fetch conditional."""

    method: str  # the run's first request
    url: str  # redacted, as in captures
    request_body_sha256: str | None
    etag: str | None
    last_modified: str | None
    version: str | None  # the provider's own version, when the source reports one
    requests: int  # how many requests the run made
    code_version: str

    def conditional_headers(self, method: str, url: str, request_body_sha256: str | None) -> dict[str, str]:
        """If-None-Match / If-Modified-Since for this request, when they can prove nothing changed."""
        if self.requests != 1 or self.code_version != code_version():
            return {}
        if (method, url, request_body_sha256) != (self.method, self.url, self.request_body_sha256):
            return {}
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers

    def same_version(self, version: str) -> bool:
        return self.version is not None and self.version == version and self.code_version == code_version()


@cache
def code_version() -> str:
    """A hash of every file under scrapers/ and schemas/ (parsers, mappings, reference CSVs)."""
    digest = hashlib.sha256()
    for folder in _CODE_DIRS:
        for path in sorted((_ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".csv", ".json", ".sql"):
                digest.update(path.relative_to(_ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
