"""`gpucat sql` is a sandbox: one statement, nothing outside the warehouse, config locked."""

from __future__ import annotations

import hashlib
import shutil

import pytest
from typer.testing import CliRunner

from gpucat.cli import app

runner = CliRunner()


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def warehouse(catalog_db, tmp_path):
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(catalog_db, path)
    return path


ROW_COUNTS = "SELECT (SELECT count(*) FROM offer_versions), (SELECT count(*) FROM scrape_runs), (SELECT count(*) FROM gpu_models)"

ATTACKS = {
    "attach-detach-rewrite": "ATTACH '{other}' AS o (READ_ONLY false)",
    "reattach-self-writable": "ATTACH '{db}' AS w (READ_ONLY false)",
    "copy-to-file": "COPY (SELECT * FROM gpu_models) TO '{victim}'",
    "export-database": "EXPORT DATABASE '{tmp}/exported'",
    "install-extension": "INSTALL httpfs",
    "load-extension": "LOAD httpfs",
    "re-enable-access": "SET enable_external_access = true",
    "unlock-config": "RESET lock_configuration",
    "read-local-file": "SELECT * FROM read_text('{victim}')",
    "two-statements": "SELECT 1; DELETE FROM offer_versions",
    "delete-read-only": "DELETE FROM offer_versions",
    "empty": "",
    "only-comment": "/* nothing */",
}


@pytest.mark.parametrize("write", [False, True], ids=["read-only", "write"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_fails_with_one_line_and_changes_no_byte(warehouse, tmp_path, attack, write):
    if write and attack == "delete-read-only":
        pytest.skip("--write allows changes to the warehouse itself")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    other = tmp_path / "other.duckdb"
    before = digest(warehouse)
    rows_before = runner.invoke(app, ["sql", ROW_COUNTS, "--format", "csv", "--db", str(warehouse)]).stdout
    sql = ATTACKS[attack].format(other=other, db=warehouse, victim=victim, tmp=tmp_path)
    result = runner.invoke(app, ["sql", sql, "--db", str(warehouse), *(["--write"] if write else [])])
    assert result.exit_code != 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    if write:  # opening writable may checkpoint; what must not change is the content
        assert runner.invoke(app, ["sql", ROW_COUNTS, "--format", "csv", "--db", str(warehouse)]).stdout == rows_before
    else:
        assert digest(warehouse) == before
    assert victim.read_text() == "precious\n"
    assert not other.exists() and not (tmp_path / "exported").exists()


def test_write_changes_the_warehouse_only(warehouse):
    result = runner.invoke(app, ["sql", "DELETE FROM rejected_rows", "--write", "--db", str(warehouse)])
    assert result.exit_code == 0, result.output
    check = runner.invoke(app, ["sql", "SELECT count(*) AS n FROM rejected_rows", "--format", "csv", "--db", str(warehouse)])
    assert check.stdout.splitlines() == ["n", "0"]


def test_python_names_are_never_tables(warehouse):
    result = runner.invoke(app, ["sql", "SELECT * FROM con", "--db", str(warehouse)])
    assert result.exit_code == 1
    assert "con" in result.stderr and "Python" not in result.stderr
