"""Inputs and outputs an unlucky operator (or an attacker) gives: each is one `error:` line, and
nothing outside the named output changes."""

from __future__ import annotations

import errno
import os
import shutil

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.warehouse import db
from tests.conftest import FIXTURES

runner = CliRunner()


def one_error_line(result) -> str:
    assert result.exit_code != 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def warehouse(catalog_db, tmp_path):
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(catalog_db, path)
    return path


@pytest.mark.parametrize(
    "args",
    [["cost", "--model", "llama-3.1-8b", "--method", "lora", "--tokens", "1B", "--dataset-gb", "nan"],
     ["offers", "--max-price", "nan"], ["offers", "--min-gpu-memory", "inf"], ["sql", "SELECT 1", "--timeout", "nan"]],
)  # fmt: skip
def test_nan_is_refused_where_a_number_is_needed(warehouse, args):
    line = one_error_line(runner.invoke(app, [*args, "--db", str(warehouse)]))
    assert "not a finite number" in line


@pytest.mark.parametrize("command", [["status"], ["offers"], ["sql", "SELECT 1"], ["refresh", "-p", "runpod-graphql"]])
def test_an_empty_db_path_is_refused(command):
    assert "is empty" in one_error_line(runner.invoke(app, [*command, "--db", ""]))


@pytest.mark.parametrize("value", ["", " ", ",", " , "])
def test_refresh_with_an_empty_provider_list_refreshes_nothing(tmp_path, value):
    target = tmp_path / "g.duckdb"
    line = one_error_line(runner.invoke(app, ["refresh", "-p", value, "--replay", str(FIXTURES), "--db", str(target)]))
    assert "names no provider" in line
    assert not target.exists()


@pytest.mark.parametrize("command", [["status"], ["offers"], ["sql", "SELECT 1"], ["export", "--out", "snaps"], ["refresh", "-p", "runpod-graphql"]])
def test_a_database_from_a_newer_gpucat_is_refused_by_every_command(warehouse, tmp_path, command, monkeypatch):
    with db.connect(warehouse) as con:
        con.execute("INSERT INTO schema_migrations VALUES ('999_from_the_future', now())")
        runs = con.execute("SELECT count(*) FROM scrape_runs").fetchone()[0]
    monkeypatch.chdir(tmp_path)
    args = [*command, "--db", str(warehouse)] + (["--replay", str(FIXTURES)] if command[0] == "refresh" else [])
    line = one_error_line(runner.invoke(app, args))
    latest = db.migration_files()[-1].stem
    assert f"newer gpucat (migration 999_from_the_future; this gpucat knows up to {latest})" in line
    con = db.duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("SELECT count(*) FROM scrape_runs").fetchone()[0] == runs
    con.close()
    assert not (tmp_path / "snaps").exists()


def test_a_manifest_that_is_not_utf8_is_one_line(tmp_path):
    capture = tmp_path / "capture"
    capture.mkdir()
    (capture / "manifest.jsonl").write_bytes(b'{"url": "\xff\xfe"}\n')
    line = one_error_line(runner.invoke(app, ["refresh", "--replay", str(capture), "--db", str(tmp_path / "g.duckdb")]))
    assert "not UTF-8" in line


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_report_out_is_a_regular_file_or_a_new_path(warehouse, tmp_path, kind):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "r.html"
    if kind == "symlink":
        out.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(out)
    else:
        out.mkdir()
    line = one_error_line(runner.invoke(app, ["report", "--out", str(out), "--db", str(warehouse)]))
    assert "not a regular file" in line
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["gpucat.duckdb", "r.html", "victim.txt"])


def test_report_out_under_a_file_is_one_line(warehouse, tmp_path):
    parent = tmp_path / "passwd"
    parent.write_text("root:x:0:0\n")
    line = one_error_line(runner.invoke(app, ["report", "--out", str(parent / "x.html"), "--db", str(warehouse)]))
    assert "cannot write --out" in line and "Not a directory" in line


def test_report_on_a_full_disk_is_one_line_and_leaves_no_temporary_file(warehouse, tmp_path, monkeypatch):
    from gpucat import outfile

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outfile.os, "fsync", full)
    out = tmp_path / "out"
    out.mkdir()
    line = one_error_line(runner.invoke(app, ["report", "--out", str(out / "r.html"), "--db", str(warehouse)]))
    assert "No space left on device" in line
    assert list(out.iterdir()) == []


def test_export_on_a_full_disk_is_one_line_and_leaves_nothing(warehouse, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pq, "write_table", full)
    out = tmp_path / "snaps"
    line = one_error_line(runner.invoke(app, ["export", "--out", str(out), "--db", str(warehouse)]))
    assert "No space left on device" in line
    assert list(out.iterdir()) == []


def test_report_replaces_a_regular_file_atomically(warehouse, tmp_path):
    out = tmp_path / "r.html"
    out.write_text("old")
    result = runner.invoke(app, ["report", "--out", str(out), "--db", str(warehouse)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!DOCTYPE html>") or "<html" in out.read_text()[:200]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpucat.duckdb", "r.html"]


def test_a_config_file_is_read_with_a_size_cap():
    line = one_error_line(runner.invoke(app, ["memory", "--config", "/dev/zero", "--method", "lora"]))
    assert "/dev/zero is over 1,000,000 bytes" in line


def test_the_html_report_escapes_control_characters(warehouse, tmp_path):
    update = "UPDATE offer_versions SET provider = provider || '\x1b]0;PWNED\x07\x1b[2J'"
    assert runner.invoke(app, ["sql", update, "--write", "--db", str(warehouse)]).exit_code == 0
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", "--out", str(out), "--db", str(warehouse)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "\x1b" not in page and "\x07" not in page
    assert "\\x1b]0;PWNED\\x07" in page  # shown, escaped, in the headline table


def test_every_json_output_is_strict(warehouse):
    update = "UPDATE offer_versions SET vcpus = 'nan'::DOUBLE"
    assert runner.invoke(app, ["sql", update, "--write", "--db", str(warehouse)]).exit_code == 0
    import json

    result = runner.invoke(app, ["offers", "--json", "--db", str(warehouse)])
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert records and all(r["vcpus"] is None for r in records)
