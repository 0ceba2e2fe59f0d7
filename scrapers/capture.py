"""The raw landing zone: capture every response to a directory, and replay from one.

Layout of a capture directory::

    <dir>/manifest.jsonl                    one JSON object per response, in fetch order
    <dir>/<provider>/<source>/<file>        the (decoded) response bodies
    <dir>/<provider>/<source>/manifest.jsonl  optional: a source folder's own entries

A manifest's `body` paths are relative to the folder the manifest is in. `gpucat refresh
--record` writes one manifest at the top; the bundled fixtures keep one per source folder, so
a source's fixtures are self-contained and adding one never edits a shared file.

A manifest entry holds the method, the redacted URL, the sha256 of the request body (POST),
the status, the headers that matter, the body's file, sha256 and size, and `fetched_at`.
`ReplayTransport` serves those entries back through httpx, so a replayed refresh runs exactly
the code of a live one (pagination included). When a request was captured more than once the
latest entry wins.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from gpucat.schemas.errors import FetchError, ReplayMiss, UserInputError
from gpucat.schemas.redact import match_url, redact

if TYPE_CHECKING:
    from gpucat.scrapers.base import Source

MANIFEST = "manifest.jsonl"
KEPT_HEADERS = ("content-type", "etag", "last-modified", "retry-after", "date", "x-ms-ratelimit-remaining")
_EXTENSIONS = {"json": ".json", "csv": ".csv", "javascript": ".js", "html": ".html", "xml": ".xml"}


def body_hash(content: bytes | None) -> str | None:
    return hashlib.sha256(content).hexdigest() if content else None


class CaptureWriter:
    """Appends bodies and manifest entries under `root`; safe to share between sources' threads."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._run = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")

    def body_path(self, source: Source, url: str, content_type: str, seq: int) -> Path:
        folder = self.root / source.provider / source.name
        folder.mkdir(parents=True, exist_ok=True)
        stem = Path(urlsplit(url).path).name or "index"
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(stem).stem)[:40] or "body"
        ext = next((e for k, e in _EXTENSIONS.items() if k in content_type), ".bin")
        return folder / f"{self._run}-{seq:04d}-{stem}{ext}"

    def append(
        self,
        *,
        source: Source,
        method: str,
        url: str,
        request_body: bytes | None,
        status: int,
        headers: Mapping[str, str],
        body: Path,
        body_sha256: str,
        size: int,
        fetched_at: datetime,
    ) -> None:
        entry = {
            "source": source.name,
            "provider": source.provider,
            "method": method,
            "url": url,
            "request_body_sha256": body_hash(request_body),
            "status": status,
            "headers": {k: redact(headers[k]) for k in KEPT_HEADERS if k in headers},  # secrets by name
            "body": body.relative_to(self.root).as_posix(),
            "body_sha256": body_sha256,
            "bytes": size,
            "fetched_at": fetched_at.astimezone(UTC).isoformat(),
        }
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self._lock, (self.root / MANIFEST).open("a", encoding="utf-8") as fh:
            fh.write(line)


@dataclass(frozen=True)
class CaptureEntry:
    method: str
    url: str
    request_body_sha256: str | None
    status: int
    headers: dict[str, str]
    body: Path
    body_sha256: str
    fetched_at: datetime


def manifest_files(root: Path) -> list[Path]:
    """The top manifest and every source folder's manifest under a capture directory."""
    return [Path(path) for path, _ in _manifest_stats(root)]


def _manifest_stats(root: Path) -> list[tuple[str, tuple[int, int, int]]]:
    """Each manifest's path and (inode, size, mtime in ns), by scanning the two folder levels
    (pathlib's glob and a stat per match cost a replayed source more than its own parse)."""
    folder = os.path.abspath(root)
    top = _file_signature(os.path.join(folder, MANIFEST))
    # In the order of sorted paths (provider, then source: a later manifest's entry wins), by name.
    nested = [path for provider in _folders(folder) for source in _folders(provider) if (path := _file_signature(os.path.join(source, MANIFEST)))]
    return ([top] if top else []) + nested


def _file_signature(path: str) -> tuple[str, tuple[int, int, int]] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (path, _signature(info)) if stat.S_ISREG(info.st_mode) else None


def _folders(parent: str) -> list[str]:
    try:
        with os.scandir(parent) as entries:
            return [entry.path for entry in sorted(entries, key=lambda entry: entry.name) if entry.is_dir()]
    except OSError:
        return []


def _signature(info: os.stat_result) -> tuple[int, int, int]:
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def read_manifest(root: Path) -> list[CaptureEntry]:
    return list(_capture_index(root)[0])


def _capture_index(root: Path) -> tuple[list[CaptureEntry], dict[tuple[str, str, str | None], CaptureEntry]]:
    files = _manifest_stats(root)
    if not files:
        raise UserInputError(f"{root} is not a capture directory (no {MANIFEST})")
    return _index([Path(path) for path, _ in files], files)


# Parsed manifests by their files' paths and stat signatures (inode, size, mtime in ns): every
# source of a replayed refresh builds its own transport over the same capture, and parsing its
# hundreds of entries (redacting and resolving each) again per source cost more than the sources'
# own parsing; so did reading and hashing every manifest again to key them. An edited manifest
# gets a new size or mtime; the bodies it names are checked against their sha256 as they are served.
_INDEXES: dict[tuple[tuple[str, tuple[int, int, int]], ...], tuple[list[CaptureEntry], dict[tuple[str, str, str | None], CaptureEntry]]] = {}
_INDEXES_LOCK = threading.Lock()
# Each source's own folder adds one (ReplayTransport): a cap of 16 emptied the cache, the whole
# capture's index included, about every 16th source of a replayed refresh, which parsed the
# manifests again for most sources.
_MAX_INDEXES = 256


def _index(
    files: list[Path], stats: list[tuple[str, tuple[int, int, int]]] | None = None
) -> tuple[list[CaptureEntry], dict[tuple[str, str, str | None], CaptureEntry]]:
    """The entries of these manifest files, and the replay lookup over them (the latest entry wins)."""
    if stats is None:
        stats = [(os.path.abspath(path), _signature(os.stat(path))) for path in files]
    key = tuple(stats)
    with _INDEXES_LOCK:
        cached = _INDEXES.get(key)
    if cached is not None:
        return cached
    entries = [entry for path in files for entry in _read_manifest_file(path)]
    lookup = {(entry.method, match_url(entry.url), entry.request_body_sha256): entry for entry in entries}
    with _INDEXES_LOCK:
        if len(_INDEXES) > _MAX_INDEXES:  # a long-lived process replaying many captures
            _INDEXES.clear()
        _INDEXES[key] = (entries, lookup)
    return entries, lookup


def _read_manifest_file(path: Path) -> list[CaptureEntry]:
    folder = path.parent
    entries = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserInputError(f"{path}: not UTF-8 text (byte {exc.start}); a manifest is JSON lines") from None
    except OSError as exc:
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from None
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            body = folder / raw["body"]
            if Path(raw["body"]).is_absolute() or not body.resolve().is_relative_to(folder.resolve()):
                raise UserInputError(f"{path}:{n}: body {raw['body']!r} is outside the capture directory; refusing to read it")
            entries.append(
                CaptureEntry(
                    method=raw["method"],
                    url=raw["url"],
                    request_body_sha256=raw.get("request_body_sha256"),
                    status=int(raw["status"]),
                    headers=dict(raw.get("headers") or {}),
                    body=body,
                    body_sha256=raw["body_sha256"],
                    fetched_at=datetime.fromisoformat(raw["fetched_at"]),
                )
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise UserInputError(f"{path}:{n}: malformed manifest entry ({exc})") from None
    return entries


class ReplayTransport(httpx.BaseTransport):
    """Serves captured responses. Unknown requests raise `ReplayMiss`; edited bodies are refused.

    With `source_folder` (a source's own `<provider>/<source>/` folder), that folder's entries
    answer first: two sources that read the same URL (an offer source and a terms source over one
    price list) each replay their own capture of it, so breaking one source's fixture breaks that
    source alone."""

    def __init__(self, root: Path, source_folder: Path | None = None):
        self._entries = _capture_index(root)[1]  # shared between transports: read only
        own = _file_signature(os.path.join(os.path.abspath(source_folder), MANIFEST)) if source_folder is not None else None
        if own is not None:
            self._entries = {**self._entries, **_index([Path(own[0])], [own])[1]}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        key = (request.method, match_url(request.url), body_hash(request.content))
        entry = self._entries.get(key)
        if entry is None:
            raise ReplayMiss(f"no captured response for {request.method} {key[1]}")
        if _not_modified(request, entry.headers):
            kept = {k: v for k, v in entry.headers.items() if k in ("etag", "last-modified")}
            return httpx.Response(status_code=304, headers=kept, extensions={"gpucat_fetched_at": entry.fetched_at})
        if not entry.body.is_file():
            raise FetchError(f"captured body {entry.body} is missing")
        return httpx.Response(
            status_code=entry.status,
            headers={**entry.headers, "content-length": str(entry.body.stat().st_size)},
            stream=_VerifiedFileStream(entry.body, entry.body_sha256),
            extensions={"gpucat_fetched_at": entry.fetched_at},
        )


def _not_modified(request: httpx.Request, captured: Mapping[str, str]) -> bool:
    """A conditional request that the captured response's ETag or Last-Modified answers: a 304, as a server would."""
    if_none_match, etag = request.headers.get("if-none-match"), captured.get("etag")
    if if_none_match is not None:
        return etag is not None and etag in (v.strip() for v in if_none_match.split(","))
    if_modified_since, last_modified = request.headers.get("if-modified-since"), captured.get("last-modified")
    return if_modified_since is not None and if_modified_since == last_modified


class _VerifiedFileStream(httpx.SyncByteStream):
    """Streams a captured body in chunks (bounded memory) and refuses it if it was edited."""

    CHUNK = 1 << 20

    def __init__(self, path: Path, sha256: str):
        self._path = path
        self._sha256 = sha256

    def __iter__(self):  # type: ignore[override]
        digest = hashlib.sha256()
        with self._path.open("rb") as fh:
            while chunk := fh.read(self.CHUNK):
                digest.update(chunk)
                yield chunk
        if digest.hexdigest() != self._sha256:
            raise FetchError(f"captured body {self._path} does not match its manifest sha256")


def rehash(root: Path) -> int:
    """Refresh body hashes and sizes in hand-maintained manifests (fixtures); returns entries changed."""
    return sum(_rehash_file(path) for path in manifest_files(root))


def _rehash_file(path: Path) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    changed = 0
    out = []
    for line in lines:
        if not line.strip():
            continue
        raw: dict[str, Any] = json.loads(line)
        content = (path.parent / raw["body"]).read_bytes()
        digest = hashlib.sha256(content).hexdigest()
        if raw.get("body_sha256") != digest or raw.get("bytes") != len(content):
            raw["body_sha256"], raw["bytes"] = digest, len(content)
            changed += 1
        out.append(json.dumps(raw, sort_keys=True))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return changed


if __name__ == "__main__":  # python -m scrapers.capture rehash fixtures
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "rehash":
        sys.exit("usage: python -m scrapers.capture rehash DIR")
    print(f"{rehash(Path(sys.argv[2]))} entries updated")


def find_entry(body: Path, max_depth: int = 4) -> CaptureEntry | None:
    """The manifest entry of a saved body, when it lives in a capture directory."""
    target = body.resolve()
    for parent in list(target.parents)[:max_depth]:
        if (parent / MANIFEST).is_file():
            try:
                entries = read_manifest(parent)
            except UserInputError:
                return None
            return next((e for e in reversed(entries) if e.body.resolve() == target), None)
    return None
