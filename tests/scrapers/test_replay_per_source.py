"""Two sources that read one URL each replay their own capture of it (the terms sources share
their offer sources' endpoints)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx

from gpucat.scrapers.capture import MANIFEST, ReplayTransport

URL = "https://api.example.com/v1/prices"


def _folder(root: Path, source: str, body: bytes, status: int = 200) -> Path:
    folder = root / "acme" / source
    folder.mkdir(parents=True)
    (folder / "prices.json").write_bytes(body)
    entry = {
        "method": "GET", "url": URL, "body": "prices.json", "body_sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body),
        "status": status, "headers": {"content-type": "application/json"}, "fetched_at": "2026-12-01T06:00:00+00:00",
        "request_body_sha256": None, "provider": "acme", "source": source,
    }  # fmt: skip
    (folder / MANIFEST).write_text(json.dumps(entry) + "\n")
    return folder


def _get(transport: ReplayTransport) -> httpx.Response:
    with httpx.Client(transport=transport) as client:
        return client.get(URL)


def test_each_source_folder_answers_its_own_requests_first(tmp_path):
    offers = _folder(tmp_path, "acme-offers", b'{"who": "offers"}', status=500)  # this one's capture is broken
    terms = _folder(tmp_path, "acme-terms", b'{"who": "terms"}')
    assert _get(ReplayTransport(tmp_path, offers)).status_code == 500
    response = _get(ReplayTransport(tmp_path, terms))
    assert (response.status_code, response.json()) == (200, {"who": "terms"})
    # without a folder, the latest entry of the whole capture answers (a recorded capture's rule)
    assert _get(ReplayTransport(tmp_path)).json() == {"who": "terms"}
    # a source with no folder of its own falls back to the whole capture
    assert _get(ReplayTransport(tmp_path, tmp_path / "acme" / "acme-other")).json() == {"who": "terms"}
