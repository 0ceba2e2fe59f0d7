"""The one HTTP client factory, and the `Fetcher` every source fetches through.

The client carries explicit timeouts, a User-Agent naming the project, a per-host concurrency
limit shared by all sources in the process, and a host allow-list checked on every request,
redirects included. The `Fetcher` owns retries (connection errors, timeouts, 429 and 5xx, with
exponential backoff, full jitter and Retry-After), the response size limit, streaming bodies to
disk, capture, and redaction of secrets from anything it reports.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import os
import random
import re
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx

from gpucat.schemas.errors import (
    DisallowedHost,
    FetchError,
    MissingApiKey,
    ResponseTooLarge,
    TransientFetchError,
)
from gpucat.schemas.records import Page
from gpucat.schemas.redact import redact, redact_bytes, redact_url, secret_patterns
from gpucat.schemas.settings import Settings
from gpucat.scrapers.base import Source
from gpucat.scrapers.capture import CaptureWriter, body_hash
from gpucat.scrapers.conditional import FetchTokens, SourceUnchanged, code_version

USER_AGENT = f"gpucat/{metadata.version('gpucat')} (+https://github.com/gpucat/gpucat)"
TIMEOUT = httpx.Timeout(connect=10.0, read=60.0, write=30.0, pool=60.0)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_CONCURRENT_PER_HOST = 4


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded in attempts and in total time; `GPUCAT_HTTP_*` settings override the defaults."""

    max_attempts: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    max_total_s: float = 300.0

    @classmethod
    def of(cls, settings: Settings) -> RetryPolicy:
        return cls(**settings.retry_overrides())

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Full jitter: uniform in [0, min(max, base * 2^attempt)]."""
        return rng.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2**attempt))


def json_body(payload: Any) -> bytes:
    """The exact bytes gpucat sends for a JSON request (captures match on their hash)."""
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()


class _RedactingFilter(logging.Filter):
    """httpx logs every request URL at INFO; strip secret query values before anything prints it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_url(a) if isinstance(a, httpx.URL) else a for a in record.args)
        return True


logging.getLogger("httpx").addFilter(_RedactingFilter())


# --- client factory ---------------------------------------------------------------------------

_host_slots: dict[str, threading.BoundedSemaphore] = {}
_host_slots_lock = threading.Lock()


def _slot(host: str) -> threading.BoundedSemaphore:
    with _host_slots_lock:
        if host not in _host_slots:
            _host_slots[host] = threading.BoundedSemaphore(MAX_CONCURRENT_PER_HOST)
        return _host_slots[host]


class _ReleasingStream(httpx.SyncByteStream):
    """Holds the host slot until the body is consumed and closed."""

    def __init__(self, inner: httpx.SyncByteStream, release: Callable[[], None]):
        self._inner = inner
        self._release = release

    def __iter__(self) -> Iterator[bytes]:
        yield from self._inner

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._release()


class GuardTransport(httpx.BaseTransport):
    """Refuses hosts the source did not declare (redirect hops included) and limits per-host concurrency."""

    def __init__(self, inner: httpx.BaseTransport, hosts: frozenset[str], source_name: str):
        self._inner = inner
        self._hosts = hosts
        self._source_name = source_name

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host not in self._hosts:
            raise DisallowedHost(
                f"{self._source_name}: refused request to undeclared host {host!r} (allowed: {', '.join(sorted(self._hosts))})"
            )
        slot = _slot(host)
        slot.acquire()
        released = threading.Event()

        def release() -> None:
            if not released.is_set():
                released.set()
                slot.release()

        try:
            response = self._inner.handle_request(request)
        except BaseException:
            release()
            raise
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_ReleasingStream(response.stream, release),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        self._inner.close()


def make_http_client(name: str, hosts: frozenset[str], transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The only way gpucat builds an HTTP client. `transport` is for replay and tests."""
    inner = transport if transport is not None else httpx.HTTPTransport(retries=0)
    return httpx.Client(
        transport=GuardTransport(inner, hosts, name),
        timeout=TIMEOUT,
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
        max_redirects=5,
    )


def make_client(source: Source, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    return make_http_client(source.name, source.hosts, transport)


# --- fetcher ----------------------------------------------------------------------------------


class Fetcher:
    """What a source's `fetch` function gets: GET/POST that return pages on disk, with retries."""

    def __init__(
        self,
        source: Source,
        client: httpx.Client,
        *,
        workdir: Path,
        capture: CaptureWriter | None = None,
        policy: RetryPolicy | None = None,
        env: Mapping[str, str] = os.environ,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        require_api_key: bool = True,
        previous: FetchTokens | None = None,
        settings: Settings | None = None,
    ):
        self.source = source
        self.client = client
        self.workdir = workdir
        self.capture = capture
        self.settings = settings or Settings()  # what sources may read (e.g. AWS regions); env holds API keys only
        self.policy = policy or RetryPolicy.of(self.settings)
        self.sleep = sleep
        self.clock = clock
        self.rng = rng or random.Random()
        self.api_key: str | None = env.get(source.api_key_env) if source.api_key_env else None
        if source.api_key_required and require_api_key and not self.api_key:
            assert source.api_key_env is not None
            raise MissingApiKey(source.api_key_env)
        self._secrets: tuple[str, ...] = (self.api_key,) if self.api_key else ()
        self._seq = 0
        self.requests_sent = 0
        # Conditional fetch: what the last good run saw, and what this one sees.
        self.previous = previous
        self._first: tuple[str, str, str | None, str | None, str | None] | None = None
        self._version: str | None = None
        self._pages = 0
        self._last_fetched_at: datetime | None = None

    # Public API for source modules.
    def get(self, url: str, *, params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None) -> Page:
        return self._request("GET", url, params=params, headers=headers, content=None)

    def post_json(self, url: str, payload: Any, *, headers: Mapping[str, str] | None = None) -> Page:
        content = json_body(payload)
        merged = {"Content-Type": "application/json", **(headers or {})}
        return self._request("POST", url, params=None, headers=merged, content=content)

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _token(self, response: httpx.Response, header: str) -> str | None:
        """A conditional-fetch token to store, or None when it holds a secret: a redacted token
        would never match again, and the key must not be stored (the next fetch is a full one)."""
        value = response.headers.get(header)
        return value if value is None or self.redact(value) == value else None

    def version(self, value: str) -> None:
        """The provider's own version of everything the source fetches; the last good run's ends the fetch."""
        self._version = value
        if self.previous is not None and self.previous.same_version(value):
            raise SourceUnchanged(f"{self.source.name}: provider version unchanged", self._last_fetched_at or datetime.now(UTC))

    @property
    def tokens(self) -> FetchTokens | None:
        """This run's conditional-fetch tokens, to store once it loads: its first request's ETag and Last-Modified, its version."""
        if self._first is None:
            return None
        method, url, body_sha, etag, last_modified = self._first
        return FetchTokens(method, url, body_sha, etag, last_modified, self._version, self._pages, code_version())

    # Internals.
    def _request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
        content: bytes | None,
    ) -> Page:
        request = self.client.build_request(method, url, params=params, headers=headers, content=content)
        shown = redact_url(request.url, self._secrets)
        conditional = {}
        if self.previous is not None and self._pages == 0:
            conditional = self.previous.conditional_headers(method, shown, body_hash(content))
            request.headers.update(conditional)
        started = self.clock()
        last_problem = ""
        for attempt in range(self.policy.max_attempts):
            delay: float | None = None
            try:
                self.requests_sent += 1
                response = self.client.send(request, stream=True)
            except httpx.TransportError as exc:
                last_problem = f"{type(exc).__name__}: {self.redact(str(exc)) or 'no detail'}"
                delay = self.policy.backoff(attempt, self.rng)
            else:
                if response.status_code == 304 and conditional:
                    response.close()
                    checked_at = response.extensions.get("gpucat_fetched_at") or datetime.now(UTC)
                    raise SourceUnchanged(f"{self.source.name}: HTTP 304 for {method} {shown}", checked_at)
                try:
                    page = self._store(response, method, shown, content)
                finally:
                    response.close()
                if response.status_code < 400:
                    if self._pages == 0:
                        self._first = (method, shown, body_hash(content), self._token(response, "etag"), self._token(response, "last-modified"))
                    self._pages += 1
                    self._last_fetched_at = page.fetched_at
                    return page
                if response.status_code not in RETRY_STATUSES:
                    raise FetchError(f"HTTP {response.status_code} from {method} {shown}")
                last_problem = f"HTTP {response.status_code}"
                delay = max(self.policy.backoff(attempt, self.rng), _retry_after_s(response) or 0.0)
            if attempt + 1 >= self.policy.max_attempts:
                break
            if self.clock() - started + delay > self.policy.max_total_s:
                last_problem += f" (next retry in {delay:.0f}s would exceed the {self.policy.max_total_s:.0f}s budget)"
                break
            self.sleep(delay)
        raise TransientFetchError(f"{method} {shown} failed after {attempt + 1} attempt(s): {last_problem}")

    def _store(self, response: httpx.Response, method: str, shown_url: str, request_body: bytes | None) -> Page:
        limit = self.source.max_response_bytes
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise ResponseTooLarge(f"{shown_url}: Content-Length {int(declared):,} bytes exceeds the {limit:,}-byte limit")
        self._seq += 1
        if self.capture is not None:
            path = self.capture.body_path(self.source, shown_url, response.headers.get("content-type", ""), self._seq)
        else:
            path = Path(tempfile.mkstemp(dir=self.workdir, prefix=f"{self.source.name}-")[1])
        digest = hashlib.sha256()
        size = 0
        with path.open("wb") as out:
            for chunk in decoded_chunks(response.iter_raw(), response.headers.get("content-encoding", ""), shown_url):
                # decoded: captures hold what the parser reads; never more than DECODE_STEP_BYTES past the limit
                size += len(chunk)
                if size > limit:
                    out.close()
                    path.unlink(missing_ok=True)
                    raise ResponseTooLarge(f"{shown_url}: body exceeds the {limit:,}-byte limit")
                digest.update(chunk)
                out.write(chunk)
        if response.status_code >= 400 and size > MAX_ERROR_BODY_BYTES:
            # An error body is never data: keep its head, so redacting it costs a bounded read.
            with path.open("r+b") as fh:
                fh.truncate(MAX_ERROR_BODY_BYTES)
        if self._secrets or response.status_code >= 400:
            # A provider may echo the key in a body (an error above all); what is kept on disk
            # (captures, and the pages parsers read into rejected rows) never holds it.
            if response.status_code >= 400:
                content = path.read_bytes()
                clean = redact(redact_bytes(content, self._secrets).decode("utf-8", "replace"), self._secrets).encode()
                if clean != content:
                    path.write_bytes(clean)
            else:
                redact_file(path, self._secrets)
            digest, size = _file_digest(path)
        fetched_at = response.extensions.get("gpucat_fetched_at") or datetime.now(UTC)
        if self.capture is not None:
            self.capture.append(
                source=self.source,
                method=method,
                url=shown_url,
                request_body=request_body,
                status=response.status_code,
                headers={k.lower(): self.redact(v) for k, v in response.headers.items()},
                body=path,
                body_sha256=digest.hexdigest(),
                size=size,
                fetched_at=fetched_at,
            )
        return Page(url=shown_url, fetched_at=fetched_at, path=path)


# A compressed body is decoded this many bytes at a time, so the size limit is checked against
# what decoding produced before it produces more: a gzip bomb costs its limit, not its ratio.
DECODE_STEP_BYTES = 1 << 20
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


def decoded_chunks(raw: Iterable[bytes], content_encoding: str, shown_url: str, step: int = DECODE_STEP_BYTES) -> Iterator[bytes]:
    """A body's bytes decoded (identity, gzip or deflate, the encodings the client accepts), each chunk
    at most `step` bytes however much one compressed chunk expands to."""
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip() and c.strip().lower() != "identity"]
    if not codings:
        yield from raw
        return
    if len(codings) > 1 or codings[0] not in _WBITS:
        raise FetchError(f"{shown_url}: unsupported Content-Encoding {content_encoding!r}")
    coding = codings[0]
    decoder = zlib.decompressobj(_WBITS[coding])
    first = True
    try:
        for chunk in raw:
            if first and coding == "deflate" and not _zlib_header(chunk):
                decoder = zlib.decompressobj(-zlib.MAX_WBITS)  # a raw deflate stream (no zlib header), as servers send too
            first = False
            data = chunk
            while data and not decoder.eof:
                out = decoder.decompress(data, step)
                data = decoder.unconsumed_tail
                if out:
                    yield out
            while not decoder.eof and (out := decoder.decompress(b"", step)):  # output still held back
                yield out
    except zlib.error as exc:
        raise FetchError(f"{shown_url}: body is not valid {coding}: {exc}") from None


def _zlib_header(data: bytes) -> bool:
    """RFC 1950: method 8 (deflate) in the low bits of the first byte, and the first two bytes a multiple of 31."""
    return len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


# An error response's body is kept up to this size (captures, messages); the rest is dropped.
MAX_ERROR_BODY_BYTES = 1 << 20
REDACT_CHUNK_BYTES = 8 << 20


def redact_file(path: Path, secrets: tuple[str, ...], chunk_bytes: int = REDACT_CHUNK_BYTES) -> None:
    """`redact_bytes` over a body file in bounded memory: chunks, each carrying over the tail a
    key (in its longest encoded form) could still be straddling, rewritten only when a key was there."""
    overlap = max((len(s) * 6 + 8 for s in secrets), default=0)  # \\u00XX per character is the longest form
    staging = path.with_name(path.name + ".redacting")
    changed = False
    with path.open("rb") as src, staging.open("wb") as out:
        pending = b""
        while True:
            chunk = src.read(chunk_bytes)
            buffer = pending + chunk
            if not chunk:
                clean = redact_bytes(buffer, secrets)
                changed |= clean != buffer
                out.write(clean)
                break
            cut = max(0, len(buffer) - overlap)
            for secret in secrets:  # never cut through a key: a match that straddles moves the cut back
                for pattern in (re.compile(re.escape(secret.encode())),) + tuple(
                    re.compile(p.pattern.encode(), p.flags & ~re.UNICODE) for p in secret_patterns(secret)
                ):
                    for match in pattern.finditer(buffer, max(0, cut - overlap)):
                        if match.start() < cut < match.end():
                            cut = match.start()
            clean = redact_bytes(buffer[:cut], secrets)
            changed |= clean != buffer[:cut]
            out.write(clean)
            pending = buffer[cut:]
    if changed:
        os.replace(staging, path)
    else:
        staging.unlink()


def _file_digest(path: Path) -> tuple[Any, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest, size


def _retry_after_s(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    if value.strip().isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
