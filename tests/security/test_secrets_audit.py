"""Secrets audit: with every API key set to a recognizable dummy and a provider that echoes it back
(bodies, headers, errors, a parser's exception), no key is found in captures, logs, Prefect's
database, the warehouse, exported Parquet or exception text.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import traceback
from pathlib import Path

import duckdb
import pytest

from gpucat import pipeline
from gpucat.export import export_snapshot
from gpucat.schemas.redact import REDACTED, redact, redact_url
from gpucat.scrapers import all_sources
from gpucat.warehouse import db
from tests.conftest import FIXTURES, ROOT
from tests.security import echo

KEYS = echo.dummy_keys()


FORMS = {f"{k} ({name})": value for k in KEYS.values() for name, value in echo.forms(k).items()}


def leaks(text: str | bytes) -> list[str]:
    """Every planted key found, in any of the forms the echoing provider sends it in."""
    data = text.encode() if isinstance(text, str) else text
    return [label for label, value in FORMS.items() if value.encode() in data]


def files_leaking(root: Path) -> list[str]:
    return [f"{p}: {leaks(p.read_bytes())}" for p in sorted(root.rglob("*")) if p.is_file() and leaks(p.read_bytes())]


def tables_leaking(path: Path) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()]
        return [t for t in tables if leaks(json.dumps(con.execute(f'SELECT * FROM "{t}"').fetchall(), default=str))]


@pytest.fixture(scope="module")
def flow_run(tmp_path_factory) -> dict[str, Path | str]:
    """The keyed sources refreshed once through the Prefect flow, in a process of its own whose
    PREFECT_HOME (and so Prefect's database) is a temporary folder."""
    root = tmp_path_factory.mktemp("audit")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GPUCAT_"))},
        **KEYS,
        "PREFECT_HOME": str(root / "prefect"),
        "PREFECT_LOGGING_LEVEL": "DEBUG",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "GPUCAT_HTTP_BACKOFF_BASE_S": "0.01",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.security.echo", str(root / "gpucat.duckdb"), str(root / "capture")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return {"root": root, "output": done.stdout + done.stderr, "statuses": done.stdout.strip().splitlines()[-1]}


def test_the_flow_ran_the_echoing_provider(flow_run):
    statuses = json.loads(flow_run["statuses"])
    assert statuses.pop(echo.RAISING_SOURCE) == "failed"
    # A keyed Vast search differs from the keyless one its fixture holds: no captured response.
    assert statuses.pop("vast-bundles") == "failed"
    assert set(statuses.values()) == {"ok"}, statuses  # the echoes did not stop the others loading


def test_prefect_logs_and_database_hold_no_key(flow_run):
    root = flow_run["root"]
    assert "unexpected account REDACTED" in flow_run["output"]  # the failing task's ERROR log, redacted
    assert leaks(flow_run["output"]) == []
    assert list((root / "prefect").rglob("*.db")), "Prefect's database is where the test expects it"
    assert files_leaking(root / "prefect") == []


def test_captures_warehouse_and_export_hold_no_key(flow_run):
    root = flow_run["root"]
    assert files_leaking(root / "capture") == []
    # The keyed sources' responses (on a new warehouse the exchange rates, keyless, are captured too).
    errors = [e for line in (root / "capture" / "manifest.jsonl").read_text().splitlines() if (e := json.loads(line))["source"] in echo.KEYED]
    assert {e["status"] for e in errors} == {200, 503}  # the echoing error bodies were captured...
    assert all(e["headers"].get("etag") == f'"{REDACTED}"' for e in errors)  # ...and their headers redacted
    assert leaks((root / "gpucat.duckdb").read_bytes()) == []
    assert tables_leaking(root / "gpucat.duckdb") == []
    with db.connect(root / "gpucat.duckdb") as con:
        snapshot = export_snapshot(con, root / "export")
    with duckdb.connect() as con:
        parquets = sorted(snapshot.path.rglob("*.parquet"))
        assert parquets
        for parquet in parquets:
            assert leaks(json.dumps(con.execute("SELECT * FROM read_parquet($p)", {"p": str(parquet)}).fetchall(), default=str)) == [], parquet
    assert files_leaking(root / "export") == []
    from typer.testing import CliRunner

    from gpucat.cli import app

    status = CliRunner().invoke(app, ["status", "--json", "--db", str(root / "gpucat.duckdb")])
    assert status.exit_code == 0 and leaks(status.output) == []
    report = CliRunner().invoke(app, ["report", "--out", str(root / "report.html"), "--db", str(root / "gpucat.duckdb")])
    assert report.exit_code == 0, report.output
    assert leaks((root / "report.html").read_bytes()) == []


def test_a_key_the_parser_decodes_from_json_escapes_is_stored_nowhere(tmp_path, monkeypatch):
    """The key arrives as `gpucat\\u002ddummy…` in a body; the parser decodes it whole into a row
    it rejects. rejected_rows, status and an export must not hold it in any form."""
    import dataclasses

    from gpucat.schemas.records import Rejected
    from gpucat.scrapers import get_source

    source = get_source("runpod-graphql")
    key = "gpucat-dummy-secret-runpod_api_key-7f3a9c"
    monkeypatch.setenv(source.api_key_env, key)
    body = '{"displayName": "pod ' + echo.forms(key)["json-escaped"] + '"}'
    real_parse = source.parse

    def parse(payload, *, url, fetched_at):
        yield from real_parse(payload, url=url, fetched_at=fetched_at)
        row = json.loads(body)
        yield Rejected("offers", (f"unknown GPU in {row['displayName']}",), row)

    registry = all_sources()
    monkeypatch.setitem(registry, source.name, dataclasses.replace(source, parse=parse))
    options = pipeline.FetchOptions(workdir=tmp_path, replay_dir=FIXTURES)
    con = db.connect(tmp_path / "gpucat.duckdb")
    runs = pipeline.refresh_sources(con, [registry[source.name]], options, prerequisites=False)
    assert [r.status for r in runs] == ["ok"]
    stored = con.execute("SELECT reasons, row_json FROM rejected_rows").fetchall()
    assert any(REDACTED in json.dumps(row, default=str) for row in stored)
    export_snapshot(con, tmp_path / "export")
    con.close()
    assert leaks((tmp_path / "gpucat.duckdb").read_bytes()) == [] and tables_leaking(tmp_path / "gpucat.duckdb") == []
    assert files_leaking(tmp_path / "export") == []


@pytest.mark.parametrize("form", sorted(echo.forms("x" * 20)))
def test_every_form_of_a_key_is_redacted_in_text_and_bytes(form):
    from gpucat.schemas.redact import redact_bytes

    key = "gpucat-dummy-secret-lambda_api_key-7f3a9c"
    planted = f"401 Unauthorized: key {echo.forms(key)[form]} is not valid"
    for cleaned in (redact(planted, (key,)), redact_bytes(planted.encode(), (key,)).decode()):
        assert REDACTED in cleaned and [v for v in echo.forms(key).values() if v in cleaned] == []


def test_in_process_refresh_logs_and_exceptions_hold_no_key(tmp_path, monkeypatch, caplog):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GPUCAT_HTTP_BACKOFF_BASE_S", "0.01")
    monkeypatch.setattr(pipeline, "make_client", pipeline.make_client)  # restored after; install() swaps it
    registry = all_sources()
    monkeypatch.setitem(registry, echo.RAISING_SOURCE, registry[echo.RAISING_SOURCE])  # restored after
    echo.install(KEYS, pipeline)
    raising = registry[echo.RAISING_SOURCE]
    caplog.set_level(logging.DEBUG)
    options = pipeline.FetchOptions(workdir=tmp_path, replay_dir=FIXTURES, record_dir=tmp_path / "capture")
    with pytest.raises(Exception) as caught:
        pipeline.parse_source(raising, pipeline.fetch_source(raising, options).pages)
    text = "".join(traceback.format_exception(caught.value))
    assert "unexpected account REDACTED" in text
    assert leaks(text) == []
    con = db.connect(tmp_path / "gpucat.duckdb")
    runs = pipeline.refresh_sources(con, [registry[n] for n in echo.KEYED], options, prerequisites=False)
    con.close()
    assert leaks(json.dumps([pipeline.summary_row(r) for r in runs], default=str)) == []
    assert leaks("\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)) == []
    assert files_leaking(tmp_path / "capture") == []


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.example.com/v1?x-api-key=s3cr3t&page=2", "https://api.example.com/v1?x-api-key=REDACTED&page=2"),
        ("https://login.example.com/token?client_secret=s3cr3t", "https://login.example.com/token?client_secret=REDACTED"),
        ("https://api.example.com/?access-token=s3cr3t", "https://api.example.com/?access-token=REDACTED"),
        ("https://api.example.com/?access_token=s3cr3t", "https://api.example.com/?access_token=REDACTED"),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc123",
            "https://b.s3.amazonaws.com/k?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED",
        ),
        ("https://user:s3cr3t@api.example.com/v1", "https://REDACTED@api.example.com/v1"),
    ],
)
def test_secret_query_parameters_and_url_credentials_are_redacted_by_name(url, expected):
    """Issue 11: these names were kept; the value need not be known to be removed."""
    assert redact_url(url) == expected
    assert redact(f"GET {url} failed") == f"GET {expected} failed"


def test_redaction_by_name_leaves_ordinary_text_alone():
    text = "duplicate_key: {'offer_id': 'a'}; max_token=5; monkey=1; see https://example.com/a?b=c"
    assert redact(text) == text
    assert redact("Authorization: Bearer abcdefghijkl") == "Authorization: Bearer REDACTED"
