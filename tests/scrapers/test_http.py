"""The shared HTTP layer: retries, Retry-After, size limit, host allow-list, redaction, capture."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from gpucat.schemas.errors import (
    DisallowedHost,
    FetchError,
    MissingApiKey,
    ResponseTooLarge,
    TransientFetchError,
    UserInputError,
)
from gpucat.schemas.redact import redact_url
from gpucat.scrapers.base import Source
from gpucat.scrapers.capture import CaptureWriter, ReplayTransport, read_manifest
from gpucat.scrapers.http import USER_AGENT, Fetcher, RetryPolicy, make_client

SOURCE = Source(
    name="test-source",
    provider="test",
    description="test",
    tables=("offers",),
    hosts=frozenset({"api.example.com"}),
    fetch=lambda f: iter(()),
    parse=lambda body, url, fetched_at: iter(()),
    api_key_env="TEST_API_KEY",
    max_response_bytes=1000,
)
KEYED = Source(**{**SOURCE.__dict__, "api_key_required": True})


def fetcher_for(handler, tmp_path: Path, *, source: Source = SOURCE, env=None, capture=None, policy=None):
    sleeps: list[float] = []
    client = make_client(source, httpx.MockTransport(handler))
    fetcher = Fetcher(
        source,
        client,
        workdir=tmp_path,
        capture=capture,
        env=env or {},
        policy=policy or RetryPolicy(max_attempts=4, backoff_base_s=1, backoff_max_s=8, max_total_s=60),
        sleep=sleeps.append,
    )
    return fetcher, sleeps


def responder(*responses: httpx.Response):
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return responses[min(len(calls), len(responses)) - 1]

    return handler, calls


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
def test_retries_transient_statuses_then_succeeds(tmp_path, status):
    handler, calls = responder(httpx.Response(status), httpx.Response(status), httpx.Response(200, text="ok"))
    fetcher, sleeps = fetcher_for(handler, tmp_path)
    page = fetcher.get("https://api.example.com/x")
    assert page.path.read_text() == "ok"
    assert len(calls) == 3
    assert len(sleeps) == 2


def test_gives_up_after_max_attempts(tmp_path):
    handler, calls = responder(httpx.Response(503))
    fetcher, sleeps = fetcher_for(handler, tmp_path)
    with pytest.raises(TransientFetchError, match="after 4 attempt"):
        fetcher.get("https://api.example.com/x")
    assert len(calls) == 4
    assert len(sleeps) == 3


def test_connection_errors_are_retried(tmp_path):
    calls = []

    def handler(request):
        calls.append(request)
        if len(calls) < 3:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, text="ok")

    fetcher, sleeps = fetcher_for(handler, tmp_path)
    assert fetcher.get("https://api.example.com/x").path.read_text() == "ok"
    assert len(calls) == 3


def test_retry_after_is_honoured(tmp_path):
    handler, calls = responder(httpx.Response(429, headers={"Retry-After": "7"}), httpx.Response(200, text="ok"))
    fetcher, sleeps = fetcher_for(handler, tmp_path)
    fetcher.get("https://api.example.com/x")
    assert sleeps[0] >= 7


def test_retry_after_beyond_budget_gives_up_without_sleeping(tmp_path):
    handler, calls = responder(httpx.Response(429, headers={"Retry-After": "3600"}))
    fetcher, sleeps = fetcher_for(handler, tmp_path)
    with pytest.raises(TransientFetchError, match="budget"):
        fetcher.get("https://api.example.com/x")
    assert (len(calls), sleeps) == (1, [])


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retried(tmp_path, status):
    handler, calls = responder(httpx.Response(status))
    fetcher, sleeps = fetcher_for(handler, tmp_path)
    with pytest.raises(FetchError, match=f"HTTP {status}"):
        fetcher.get("https://api.example.com/x")
    assert len(calls) == 1


def test_undeclared_host_is_refused_before_any_request(tmp_path):
    handler, calls = responder(httpx.Response(200))
    fetcher, _ = fetcher_for(handler, tmp_path)
    with pytest.raises(DisallowedHost, match="evil.example.net"):
        fetcher.get("https://evil.example.net/x")
    assert calls == []


def test_redirect_to_undeclared_host_is_refused(tmp_path):
    def handler(request):
        if request.url.host == "api.example.com":
            return httpx.Response(302, headers={"Location": "https://evil.example.net/steal"})
        return httpx.Response(200, text="should never be reached")

    fetcher, _ = fetcher_for(handler, tmp_path)
    with pytest.raises(DisallowedHost):
        fetcher.get("https://api.example.com/x")


def test_redirect_within_declared_host_is_followed(tmp_path):
    def handler(request):
        if request.url.path == "/old":
            return httpx.Response(301, headers={"Location": "https://api.example.com/new"})
        return httpx.Response(200, text="moved")

    fetcher, _ = fetcher_for(handler, tmp_path)
    assert fetcher.get("https://api.example.com/old").path.read_text() == "moved"


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, content=b"x" * 1001),
        httpx.Response(200, content=b"x" * 10, headers={"Content-Length": "5000"}),
    ],
    ids=["streamed-body", "declared-length"],
)
def test_oversized_responses_are_refused(tmp_path, response):
    handler, _ = responder(response)
    fetcher, _ = fetcher_for(handler, tmp_path)
    with pytest.raises(ResponseTooLarge):
        fetcher.get("https://api.example.com/x")


def test_user_agent_names_the_project(tmp_path):
    handler, calls = responder(httpx.Response(200))
    fetcher, _ = fetcher_for(handler, tmp_path)
    fetcher.get("https://api.example.com/x")
    assert calls[0].headers["User-Agent"] == USER_AGENT
    assert USER_AGENT.startswith("gpucat/")


def test_missing_required_key_raises_missing_api_key(tmp_path):
    handler, calls = responder(httpx.Response(200))
    with pytest.raises(MissingApiKey) as info:
        fetcher_for(handler, tmp_path, source=KEYED, env={})
    assert info.value.env_var == "TEST_API_KEY"
    assert calls == []


def test_secrets_never_reach_captures_errors_or_pages(tmp_path):
    secret = "sk-live-0123456789"
    handler, calls = responder(httpx.Response(500, text="nope"))
    capture = CaptureWriter(tmp_path / "cap")
    fetcher, _ = fetcher_for(handler, tmp_path, source=KEYED, env={"TEST_API_KEY": secret}, capture=capture)
    with pytest.raises(TransientFetchError) as info:
        fetcher.get("https://api.example.com/x", params={"api_key": secret}, headers={"Authorization": f"Bearer {secret}"})
    assert calls[0].url.params["api_key"] == secret  # it was really sent
    assert secret not in str(info.value)
    captured = "".join(p.read_text() for p in (tmp_path / "cap").rglob("*") if p.is_file())
    assert secret not in captured
    assert "api_key=REDACTED" in (tmp_path / "cap" / "manifest.jsonl").read_text()


def test_redact_url_normalizes_port_and_secret_params():
    assert redact_url("https://prices.azure.com:443/api?x=1&token=abc&$skip=10") == "https://prices.azure.com/api?x=1&token=REDACTED&$skip=10"


def test_capture_then_replay_returns_the_same_body_and_time(tmp_path):
    handler, _ = responder(httpx.Response(200, json={"a": 1}, headers={"ETag": '"v1"'}))
    capture = CaptureWriter(tmp_path / "cap")
    fetcher, _ = fetcher_for(handler, tmp_path, capture=capture)
    live = fetcher.post_json("https://api.example.com/graphql", {"query": "{ a }"})

    [entry] = read_manifest(tmp_path / "cap")
    assert (entry.method, entry.url, entry.status, entry.headers["etag"]) == ("POST", "https://api.example.com/graphql", 200, '"v1"')
    assert entry.request_body_sha256 is not None

    replay_client = make_client(SOURCE, ReplayTransport(tmp_path / "cap"))
    replayed = Fetcher(SOURCE, replay_client, workdir=tmp_path, env={}).post_json("https://api.example.com/graphql", {"query": "{ a }"})
    assert json.loads(replayed.path.read_bytes()) == {"a": 1}
    assert replayed.fetched_at == live.fetched_at


def test_replay_refuses_unknown_requests_and_edited_bodies(tmp_path):
    handler, _ = responder(httpx.Response(200, text="original"))
    fetcher, _ = fetcher_for(handler, tmp_path, capture=CaptureWriter(tmp_path / "cap"))
    page = fetcher.get("https://api.example.com/x")
    replay = Fetcher(SOURCE, make_client(SOURCE, ReplayTransport(tmp_path / "cap")), workdir=tmp_path, env={})
    with pytest.raises(FetchError, match="no captured response"):
        replay.get("https://api.example.com/other")
    page.path.write_text("tampered")
    with pytest.raises(FetchError, match="sha256"):
        replay.get("https://api.example.com/x")


def test_httpx_request_logs_are_redacted(tmp_path, caplog):
    import logging

    handler, _ = responder(httpx.Response(200))
    fetcher, _ = fetcher_for(handler, tmp_path)
    with caplog.at_level(logging.INFO, logger="httpx"):
        fetcher.get("https://api.example.com/x", params={"api_key": "sk-secret-value"})
    assert "api.example.com" in caplog.text
    assert "sk-secret-value" not in caplog.text


def test_per_host_concurrency_is_limited(tmp_path):
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from gpucat.scrapers.http import MAX_CONCURRENT_PER_HOST

    lock = threading.Lock()
    active, peak = 0, 0

    def handler(request):
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with lock:
            active -= 1
        return httpx.Response(200, text="ok")

    client = make_client(SOURCE, httpx.MockTransport(handler))
    fetcher = Fetcher(SOURCE, client, workdir=tmp_path, env={})
    with ThreadPoolExecutor(max_workers=3 * MAX_CONCURRENT_PER_HOST) as pool:
        list(pool.map(lambda i: fetcher.get(f"https://api.example.com/{i}"), range(3 * MAX_CONCURRENT_PER_HOST)))
    assert peak == MAX_CONCURRENT_PER_HOST


@pytest.mark.parametrize("body", ["../../../../etc/passwd", "/etc/passwd", "a/../../outside.json"])
def test_replay_refuses_a_manifest_path_outside_its_directory(tmp_path, body):
    capture = tmp_path / "cap"
    capture.mkdir()
    (tmp_path / "outside.json").write_text("{}")
    entry = {"method": "GET", "url": "https://example.com/x", "status": 200, "body": body, "body_sha256": "0" * 64, "fetched_at": "2026-11-20T06:00:00+00:00"}
    (capture / "manifest.jsonl").write_text(json.dumps(entry) + "\n")
    with pytest.raises(UserInputError, match="outside the capture directory"):
        ReplayTransport(capture)


def test_a_capture_is_parsed_once_per_content(tmp_path, monkeypatch):
    """Every source of a replayed refresh builds a transport over one capture: its manifest is parsed once, and again only when it changes."""
    from gpucat.scrapers import capture as capture_module

    handler, _ = responder(httpx.Response(200, text="one"), httpx.Response(200, text="two"))
    fetcher, _ = fetcher_for(handler, tmp_path, capture=CaptureWriter(tmp_path / "cap"))
    fetcher.get("https://api.example.com/x")
    parsed: list[Path] = []
    real = capture_module._read_manifest_file
    monkeypatch.setattr(capture_module, "_read_manifest_file", lambda path: parsed.append(path) or real(path))

    def replay(url: str) -> bytes:
        return Fetcher(SOURCE, make_client(SOURCE, ReplayTransport(tmp_path / "cap")), workdir=tmp_path, env={}).get(url).path.read_bytes()

    assert [replay("https://api.example.com/x") for _ in range(3)] == [b"one"] * 3
    assert len(read_manifest(tmp_path / "cap")) == 1
    assert len(parsed) == 1
    fetcher.get("https://api.example.com/y")  # the capture grows: the next transport sees it
    assert replay("https://api.example.com/y") == b"two"
    assert len(parsed) == 2


def test_a_body_is_redacted_in_bounded_chunks_as_if_whole(tmp_path):
    """Keys in every form, planted across chunk boundaries, are found as a whole-body pass finds them."""
    from gpucat.schemas.redact import redact_bytes
    from gpucat.scrapers.http import redact_file
    from tests.security.echo import forms

    key = "gpucat-dummy-secret-lambda_api_key-7f3a9c"
    planted = b"".join(b"x" * n + value.encode() for n, value in zip(range(3, 40, 5), list(forms(key).values()) * 2, strict=False))
    body = tmp_path / "body"
    for chunk in (7, 16, 33, 64, 1 << 20):
        body.write_bytes(planted)
        redact_file(body, (key,), chunk_bytes=chunk)
        assert body.read_bytes() == redact_bytes(planted, (key,)), chunk
        assert not [v for v in forms(key).values() if v.encode() in body.read_bytes()]


def test_an_error_body_is_kept_only_up_to_its_cap(tmp_path):
    from gpucat.scrapers import http as http_module

    huge = b"<html>" + b"e" * (3 * http_module.MAX_ERROR_BODY_BYTES) + b"</html>"
    capture = CaptureWriter(tmp_path / "capture")
    roomy = Source(**{**SOURCE.__dict__, "max_response_bytes": 10**7})
    fetcher, _ = fetcher_for(lambda request: httpx.Response(401, content=huge), tmp_path, source=roomy, capture=capture)
    with pytest.raises(FetchError):
        fetcher.get("https://api.example.com/v1/prices")
    bodies = [p for p in (tmp_path / "capture").rglob("*") if p.is_file() and p.name != "manifest.jsonl"]
    assert len(bodies) == 1 and bodies[0].read_bytes() == huge[: http_module.MAX_ERROR_BODY_BYTES]


class _Chunks(httpx.SyncByteStream):
    def __init__(self, *chunks: bytes):
        self.chunks = chunks

    def __iter__(self):
        yield from self.chunks


def _deflate(data: bytes, wbits: int) -> bytes:
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "wbits"), [("gzip", 31), ("deflate", 15), ("deflate", -15), ("GZIP, identity", 31)], ids=["gzip", "zlib-deflate", "raw-deflate", "gzip-listed-with-identity"]
)
def test_compressed_bodies_are_stored_decoded(tmp_path, encoding, wbits):
    body = b'{"offers": [' + b'{"gpu": "H100"},' * 40 + b"{}]}"
    compressed = _deflate(body[:900], wbits)
    # one stream served in two pieces, the cut inside the compressed data
    handler, _ = responder(httpx.Response(200, headers={"Content-Encoding": encoding}, stream=_Chunks(compressed[:7], compressed[7:])))
    fetcher, _ = fetcher_for(handler, tmp_path)
    assert fetcher.get("https://api.example.com/x").path.read_bytes() == body[:900]


def test_a_compression_bomb_is_refused_having_decoded_at_most_the_limit_and_one_step(tmp_path, monkeypatch):
    """200 MB of zeros in ~200 KB of gzip, served as one chunk: decoding it whole (as httpx's own
    decoder does) holds the 200 MB at once; decoding DECODE_STEP_BYTES at a time holds one step."""
    import tracemalloc

    from gpucat.scrapers import http

    bomb = _deflate(bytes(200 * 10**6), 31)
    handler, _ = responder(httpx.Response(200, headers={"Content-Encoding": "gzip"}, stream=_Chunks(bomb)))
    fetcher, _ = fetcher_for(handler, tmp_path)
    decoded: list[int] = []
    chunks = http.decoded_chunks
    monkeypatch.setattr(http, "decoded_chunks", lambda *a: (decoded.append(len(c)) or c for c in chunks(*a)))
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLarge, match="body exceeds the 1,000-byte limit"):
            fetcher.get("https://api.example.com/x")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(decoded) <= SOURCE.max_response_bytes + http.DECODE_STEP_BYTES
    assert peak < len(bomb) + 8 * http.DECODE_STEP_BYTES  # the compressed chunk, a few steps: never the 200 MB
    assert list(tmp_path.iterdir()) == []  # the partial body is gone


@pytest.mark.parametrize(
    ("encoding", "body", "message"),
    [("br", b"\x0b\x02\x80", "unsupported Content-Encoding 'br'"), ("gzip, gzip", b"", "unsupported Content-Encoding"), ("gzip", b"not gzip at all", "not valid gzip")],
    ids=["brotli", "stacked", "corrupt"],
)
def test_undecodable_bodies_fail_in_one_line(tmp_path, encoding, body, message):
    handler, _ = responder(httpx.Response(200, headers={"Content-Encoding": encoding}, stream=_Chunks(body)))
    fetcher, _ = fetcher_for(handler, tmp_path, policy=RetryPolicy(max_attempts=1, backoff_base_s=1, backoff_max_s=1, max_total_s=1))
    with pytest.raises(FetchError, match=message):
        fetcher.get("https://api.example.com/x")
