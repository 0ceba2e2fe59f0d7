"""Conditional fetch: an unchanged source costs one small request, no body and no parse."""

from __future__ import annotations

import dataclasses
import json
import shutil

import httpx
import pytest

from gpucat import pipeline
from gpucat.scrapers import conditional, get_source
from gpucat.scrapers.http import make_client
from gpucat.warehouse import db
from tests.conftest import FIXTURES

ECB_BODY = (FIXTURES / "ecb/ecb-rates/eurofxref-daily.xml").read_bytes()
ETAG = '"5f3c-640b1c"'


class Server:
    """A mocked endpoint that honours If-None-Match, counting requests and body bytes sent."""

    def __init__(self, body: bytes):
        self.body = body
        self.requests: list[httpx.Request] = []
        self.body_bytes = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.headers.get("if-none-match") == ETAG:
            return httpx.Response(304, headers={"ETag": ETAG})
        self.body_bytes += len(self.body)
        return httpx.Response(200, content=self.body, headers={"ETag": ETAG, "Content-Type": "text/xml"})


@pytest.fixture
def con(tmp_path):
    connection = db.connect(tmp_path / "gpucat.duckdb")
    yield connection
    connection.close()


def counting(source, calls: list[str]):
    def parse(body, *, url, fetched_at):
        calls.append(url)
        return source.parse(body, url=url, fetched_at=fetched_at)

    return dataclasses.replace(source, parse=parse)


def refresh(con, source, tmp_path, **options):
    [run] = pipeline.refresh_sources(con, [source], pipeline.FetchOptions(workdir=tmp_path, **options), prerequisites=False)
    return run


def test_second_live_refresh_of_an_unchanged_endpoint_transfers_no_body_and_parses_nothing(con, tmp_path, monkeypatch):
    server = Server(ECB_BODY)
    monkeypatch.setattr(pipeline, "make_client", lambda source, transport=None: make_client(source, httpx.MockTransport(server)))
    parsed: list[str] = []
    source = counting(get_source("ecb-rates"), parsed)

    first = refresh(con, source, tmp_path)
    assert (first.status, len(parsed), server.body_bytes) == ("ok", 1, len(ECB_BODY))
    scraped_before = con.execute("SELECT max(scraped_at) FROM exchange_rate_versions WHERE valid_to IS NULL").fetchone()[0]

    second = refresh(con, source, tmp_path)
    assert second.status == "unchanged"
    assert len(server.requests) == 2 and server.requests[1].headers["if-none-match"] == ETAG
    assert (len(parsed), server.body_bytes) == (1, len(ECB_BODY))  # no second parse, no second body
    runs = con.execute("SELECT status, rows_fetched, pages FROM scrape_runs ORDER BY finished_at").fetchall()
    assert runs == [("ok", first.rows_fetched, 1), ("unchanged", 0, 0)]
    # Its rows stay current and count as seen by the unchanged run.
    current = con.execute(
        "SELECT count(*), min(scraped_at), min(last_run_id) = max(last_run_id), max(last_run_id) FROM exchange_rate_versions WHERE valid_to IS NULL"
    ).fetchone()
    assert current[0] == first.rows_valid and current[1] > scraped_before and current[2] and current[3] == second.run_id


def test_changed_parsers_fetch_in_full_once_more(con, tmp_path, monkeypatch):
    server = Server(ECB_BODY)
    monkeypatch.setattr(pipeline, "make_client", lambda source, transport=None: make_client(source, httpx.MockTransport(server)))
    source = get_source("ecb-rates")
    refresh(con, source, tmp_path)
    monkeypatch.setattr(conditional, "code_version", lambda: "another parser")
    assert refresh(con, source, tmp_path).status == "ok"
    assert "if-none-match" not in server.requests[1].headers


def test_a_failed_run_keeps_the_last_good_validators(con, tmp_path, monkeypatch):
    server = Server(ECB_BODY)
    monkeypatch.setattr(pipeline, "make_client", lambda source, transport=None: make_client(source, httpx.MockTransport(server)))
    refresh(con, get_source("ecb-rates"), tmp_path)
    saved = con.execute("SELECT run_id, etag FROM source_validators").fetchall()
    server.body = b"<not xml"
    monkeypatch.setattr(conditional, "code_version", lambda: "another parser")
    assert refresh(con, get_source("ecb-rates"), tmp_path).status == "failed"
    assert con.execute("SELECT run_id, etag FROM source_validators").fetchall() == saved


def test_replay_answers_304_to_a_matching_if_none_match(con, tmp_path):
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES / "ecb", capture / "ecb")
    manifest = capture / "ecb/ecb-rates/manifest.jsonl"
    entry = json.loads(manifest.read_text())
    entry["headers"]["etag"] = ETAG
    manifest.write_text(json.dumps(entry) + "\n")
    parsed: list[str] = []
    source = counting(get_source("ecb-rates"), parsed)
    assert refresh(con, source, tmp_path, replay_dir=capture).status == "ok"
    assert refresh(con, source, tmp_path, replay_dir=capture).status == "unchanged"
    assert len(parsed) == 1


def test_aws_unchanged_versions_skip_every_region_file(con, tmp_path):
    parsed: list[str] = []
    source = counting(get_source("aws-pricelist"), parsed)
    assert refresh(con, source, tmp_path, replay_dir=FIXTURES).status == "ok"
    files = len(parsed)
    assert refresh(con, source, tmp_path, replay_dir=FIXTURES).status == "unchanged"
    assert len(parsed) == files  # only the small region index was fetched again
    [(version,)] = con.execute("SELECT version FROM source_validators WHERE source = 'aws-pricelist'").fetchall()
    assert "/20261113194237/us-east-1/index.csv" in version


def test_sources_of_several_requests_send_no_http_validators():
    seen = conditional.FetchTokens("GET", "https://x/1", None, ETAG, None, None, 3, conditional.code_version())
    assert seen.conditional_headers("GET", "https://x/1", None) == {}
    single = dataclasses.replace(seen, requests=1)
    assert single.conditional_headers("GET", "https://x/1", None) == {"If-None-Match": ETAG}
    assert single.conditional_headers("GET", "https://x/2", None) == {}


def test_a_recording_fetches_in_full(con, tmp_path):
    refresh(con, get_source("aws-pricelist"), tmp_path, replay_dir=FIXTURES)
    run = refresh(con, get_source("aws-pricelist"), tmp_path, replay_dir=FIXTURES, record_dir=tmp_path / "rec")
    assert run.status == "ok"
    assert len((tmp_path / "rec/manifest.jsonl").read_text().splitlines()) == 4  # the index and three region files
