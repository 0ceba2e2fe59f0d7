"""`gpucat sql` output: rows streamed and capped, a timeout, strict JSON, control characters escaped."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.cli.catalog import TABLE_MAX_ROWS

runner = CliRunner()


@pytest.fixture
def warehouse(catalog_db, tmp_path):
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(catalog_db, path)
    return str(path)


def test_a_table_stops_at_its_row_cap_and_says_so(warehouse):
    result = runner.invoke(app, ["sql", "SELECT range AS n FROM range(1000000000)", "--db", warehouse])
    assert result.exit_code == 0, result.output
    body = result.stdout.splitlines()
    assert len(body) == 2 + TABLE_MAX_ROWS and body[-1].strip() == f"{TABLE_MAX_ROWS - 1:,}"
    assert f"showed the first {TABLE_MAX_ROWS:,} rows" in result.stderr


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_max_rows_caps_any_format(warehouse, fmt):
    result = runner.invoke(app, ["sql", "SELECT range AS n FROM range(1000000000)", "--format", fmt, "--max-rows", "3", "--db", warehouse])
    assert result.exit_code == 0, result.output
    expected = [{"n": 0}, {"n": 1}, {"n": 2}]
    assert (json.loads(result.stdout) if fmt == "json" else result.stdout.splitlines()) == (expected if fmt == "json" else ["n", "0", "1", "2"])
    assert "showed the first 3 rows" in result.stderr


def test_an_uncut_result_says_nothing(warehouse):
    result = runner.invoke(app, ["sql", "SELECT range AS n FROM range(3)", "--db", warehouse])
    assert result.exit_code == 0 and result.stderr == ""


def test_a_long_statement_stops_at_the_timeout(warehouse):
    result = runner.invoke(app, ["sql", "SELECT count(*) FROM range(1000000000000)", "--timeout", "0.5", "--db", warehouse])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: the statement ran longer than 0.5 s") and result.stderr.count("\n") == 1


def test_ctrl_c_interrupts_the_statement(warehouse, monkeypatch):
    """KeyboardInterrupt reaches the waiting main thread, which interrupts DuckDB's worker."""
    import queue

    from gpucat import catalog

    real_get, waits = queue.Queue.get, []

    def get(self, *args, **kwargs):
        waits.append(1)
        if len(waits) == 20:  # a second or so into the statement, as a user would press Ctrl-C
            raise KeyboardInterrupt
        return real_get(self, *args, **kwargs)

    monkeypatch.setattr(queue.Queue, "get", get)
    result = runner.invoke(app, ["sql", "SELECT count(*) FROM range(1000000000000)", "--db", warehouse])
    assert result.exit_code == 1
    assert result.stderr == "error: interrupted (Ctrl-C): the statement was stopped\n"
    assert catalog.BATCH_ROWS > 0


def test_json_is_strict(warehouse):
    sql = "SELECT 'nan'::DOUBLE AS a, 'inf'::DOUBLE AS b, '-inf'::DOUBLE AS c, 1.50::DECIMAL(6,2) AS d, 3::DECIMAL(4,0) AS e, [1.0, 'nan'::DOUBLE] AS f"
    result = runner.invoke(app, ["sql", sql, "--format", "json", "--db", warehouse])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"not JSON: {c}")) == [
        {"a": None, "b": None, "c": None, "d": 1.5, "e": 3, "f": [1.0, None]}
    ]


ESCAPE = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\u202e"


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_control_characters_never_reach_the_terminal_in_a_table(warehouse, fmt):
    sql = f"SELECT 'RunPod{ESCAPE}' AS \"name{ESCAPE}\""
    result = runner.invoke(app, ["sql", sql, "--db", warehouse] + (["--format", fmt] if fmt != "table" else []))
    assert result.exit_code == 0, result.output
    if fmt == "table":
        assert not any(ch in result.stdout for ch in "\x1b\x07\x9b\u202e")
        assert "RunPod\\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m\\u202e" in result.stdout


def test_offers_escape_a_provider_string(catalog_db, tmp_path):
    path = tmp_path / "g.duckdb"
    shutil.copy(catalog_db, path)
    update = f"UPDATE offer_versions SET instance_type = 'pod{ESCAPE}'"
    assert runner.invoke(app, ["sql", update, "--write", "--db", str(path)]).exit_code == 0
    result = runner.invoke(app, ["offers", "--columns", "provider,instance", "--db", str(path)])
    assert result.exit_code == 0, result.output
    assert "pod\\x1b]0;PWNED" in result.stdout and "\x1b" not in result.stdout
