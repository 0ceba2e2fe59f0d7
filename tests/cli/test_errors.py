"""Expected failures print one `error:` line and exit non-zero, never a traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.scrapers import all_sources
from gpucat.warehouse import db

runner = CliRunner()


@pytest.fixture
def empty_db(tmp_path):
    path = tmp_path / "g.duckdb"
    db.connect(path).close()
    return path


def one_error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize("command", [["status"], ["offers"], ["sql", "SELECT 1"], ["export", "--out", "snap"]])
def test_missing_database(tmp_path, command):
    result = runner.invoke(app, [*command, "--db", str(tmp_path / "nope.duckdb")])
    assert result.exit_code == 1
    assert "no database at" in one_error_line(result)
    assert not (tmp_path / "nope.duckdb").exists()


@pytest.mark.parametrize(
    ("sql", "message"),
    [("SELEC 1", "syntax error"), ("SELECT * FROM no_such_table", "no_such_table"), ("DELETE FROM scrape_runs", "read-only")],
)
def test_bad_sql(empty_db, sql, message):
    result = runner.invoke(app, ["sql", sql, "--db", str(empty_db)])
    assert result.exit_code == 1
    assert message in one_error_line(result).lower()


def test_unknown_source_for_parse(tmp_path):
    body = tmp_path / "x.json"
    body.write_text("{}")
    result = runner.invoke(app, ["parse", "no-such-source", str(body)])
    assert result.exit_code == 2
    assert "unknown source 'no-such-source'" in one_error_line(result)


def test_unreadable_file_for_parse(tmp_path):
    result = runner.invoke(app, ["parse", sorted(all_sources())[0], str(tmp_path / "missing.json")])
    assert result.exit_code == 2
    assert "cannot read" in one_error_line(result)


BINARY = bytes(range(256)) * 8


@pytest.mark.parametrize(
    "body", [b"<!DOCTYPE html><html><body><form>Sign in</form></body></html>", b"", BINARY], ids=["login-page", "empty", "binary"]
)
@pytest.mark.parametrize("name", sorted(all_sources()))
def test_a_body_that_is_not_the_payload_is_one_error_line(tmp_path, name, body):
    path = tmp_path / "body"
    path.write_bytes(body)
    result = runner.invoke(app, ["parse", name, str(path)])
    assert result.exit_code == 1, result.output
    assert one_error_line(result)


def test_unknown_provider_for_refresh(tmp_path):
    result = runner.invoke(app, ["refresh", "--providers", "nimbus", "--db", str(tmp_path / "g.duckdb")])
    assert result.exit_code == 2
    assert "unknown provider or source 'nimbus'" in one_error_line(result)


def test_replay_directory_without_manifest(tmp_path):
    result = runner.invoke(app, ["refresh", "--replay", str(tmp_path), "--db", str(tmp_path / "g.duckdb")])
    assert result.exit_code == 2
    assert "not a capture directory" in one_error_line(result)


def test_conflicting_market_flags(empty_db):
    result = runner.invoke(app, ["offers", "--spot", "--on-demand", "--db", str(empty_db)])
    assert result.exit_code == 2
    assert "exclude each other" in one_error_line(result)


def test_binary_config_for_memory(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(BINARY)
    result = runner.invoke(app, ["memory", "--config", str(path), "--method", "lora"])
    assert result.exit_code == 2
    assert "not a text file" in one_error_line(result)


def test_half_a_database_is_one_error_line_for_every_reader(catalog_db, tmp_path):
    half = tmp_path / "half.duckdb"
    half.write_bytes(catalog_db.read_bytes()[: catalog_db.stat().st_size // 2])
    for args in (["status"], ["offers"], ["export", "--out", str(tmp_path / "snaps")], ["sql", "SELECT 1"]):
        result = runner.invoke(app, [*args, "--db", str(half)])
        assert result.exit_code != 0, args
        assert "database error: IO Error" in one_error_line(result) or "cannot open" in one_error_line(result)
    assert not (tmp_path / "snaps").exists()
