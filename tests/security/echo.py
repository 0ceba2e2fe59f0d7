"""A mocked provider that echoes the caller's API key back in every way a real one has.

It wraps the replay transport (fixtures): the first request to each URL fails with a 503 whose
body and headers quote the key and the raw request URL; the retry gets the fixture response with
the key in its headers and, for a JSON object body, in an extra top-level field. One source's
parser is made to fail with the key in its message, as a parser quoting a payload value would.
`python -m tests.security.echo DB CAPTURE_DIR` runs the Prefect flow once that way (the secrets
audit runs it in a subprocess, so Prefect's database lives in the test's own PREFECT_HOME).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import sys
from collections.abc import Mapping
from urllib.parse import quote

import httpx

from gpucat.scrapers import all_sources, http

KEYED = sorted(name for name, s in all_sources().items() if s.api_key_env)
RAISING_SOURCE = "seeweb"  # its parser quotes the key in an exception


def forms(key: str) -> dict[str, str]:
    """The ways a provider has been seen to echo a key: as is, upper-cased, percent-encoded,
    JSON-escaped, base64 alone and inside an HTTP Basic credential."""
    return {
        "raw": key,
        "upper": key.upper(),
        "percent": quote(key, safe="").replace("-", "%2D"),
        "json-escaped": key.replace("-", "\\u002d"),
        "base64": base64.b64encode(key.encode()).decode(),
        "basic-auth": base64.b64encode(f"user:{key}".encode()).decode(),
    }


def dummy_keys() -> dict[str, str]:
    """A recognizable dummy value for every API-key variable a source declares."""
    return {s.api_key_env: f"gpucat-dummy-secret-{s.api_key_env.lower()}-7f3a9c" for s in all_sources().values() if s.api_key_env}


class EchoTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, key: str):
        self._inner = inner
        self._key = key
        self._asked: dict[str, int] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self._asked[url] = self._asked.get(url, 0) + 1
        every = forms(self._key)
        echo = {"etag": f'"{self._key}"', "last-modified": every["upper"], "x-echo-key": self._key, "retry-after": "0", "date": f"key={self._key}",
                **{f"x-echo-{name}": value for name, value in every.items()}}  # fmt: skip
        if self._asked[url] == 1:
            body = f"upstream error for {request.method} {url} (key {self._key}, auth {request.headers.get('authorization')}) " + " ".join(
                f"{name}={value}" for name, value in every.items()
            )
            return httpx.Response(503, headers=echo, content=body.encode(), extensions={})
        response = self._inner.handle_request(request)
        content = response.read()
        try:
            doc = json.loads(content)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            # The escaped form written by hand: json.dumps would not escape a hyphen.
            echoed = json.dumps({**doc, "request_echo": {"api_key": self._key, **{n: v for n, v in every.items() if n != "json-escaped"}}})
            content = (echoed[:-1] + f', "escaped_key": "{every["json-escaped"]}"}}').encode()
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        return httpx.Response(response.status_code, headers={**headers, **echo}, content=content, extensions=response.extensions)


def install(keys: Mapping[str, str], pipeline_module) -> None:
    """Route every source's requests through the echoing provider; make one parser quote its key."""
    real = http.make_client

    def make_client(source, transport=None):
        key = keys.get(source.api_key_env or "")
        return real(source, EchoTransport(transport, key) if key and transport is not None else transport)

    pipeline_module.make_client = make_client
    sources = all_sources()
    key = keys[sources[RAISING_SOURCE].api_key_env]

    def parse(body, *, url, fetched_at):
        raise ValueError(f"unexpected account {key} in the plan list")

    sources[RAISING_SOURCE] = dataclasses.replace(sources[RAISING_SOURCE], parse=parse)


if __name__ == "__main__":
    import os

    from gpucat import pipeline
    from gpucat.flows.refresh import refresh
    from tests.conftest import FIXTURES

    db, capture = sys.argv[1], sys.argv[2]
    install({k: os.environ[k] for k in dummy_keys()}, pipeline)
    state = refresh(providers=KEYED, replay_dir=str(FIXTURES), record_dir=capture, db_path=db, return_state=True)
    summary = state.result(raise_on_failure=False)
    print(json.dumps({row["source"]: row["status"] for row in summary}))
