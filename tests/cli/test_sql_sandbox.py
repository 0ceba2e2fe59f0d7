"""`gpucat sql` is a sandbox: one statement, nothing outside the warehouse, config locked.

Every attack runs on both backends: the DuckDB file, and the team warehouse (DuckLake on a real
PostgreSQL, tests/postgres_server.py) opened through least-privilege roles with passwords
(warehouse/postgres/lake_roles.sql), where DuckDB must be able to reach PostgreSQL and the lake's
data folder, so the sandbox's own checks are all that keeps a statement inside.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.warehouse import lake
from tests.postgres_server import BIN, SKIP_REASON, new_database, psql, running_server

runner = CliRunner()
ROLES_SQL = Path(__file__).resolve().parents[2] / "warehouse" / "postgres" / "lake_roles.sql"
LAKE_SOURCES = ["runpod-graphql", "lambda-instance-types"]
WRITER_PASSWORD, READER_PASSWORD = "w-Secret-9f1c", "r-Secret-2b7e"


@dataclass(frozen=True)
class Backend:
    target: str  # what --db takes
    files: Path  # every file whose bytes must not change
    password: str | None = None


def fingerprint(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def postgres() -> Iterator[dict[str, object]]:
    if BIN is None:
        pytest.skip(SKIP_REASON)
    with running_server() as server:
        yield server


@pytest.fixture(scope="module")
def lake_warehouse(postgres) -> Iterator[tuple[str, str, Path]]:
    """A lake loaded with two sources by the writer role: (reader URL, writer URL, data folder)."""
    from gpucat import pipeline
    from gpucat.scrapers import get_source
    from gpucat.warehouse import db
    from tests.conftest import FIXTURES

    superuser_url = new_database(postgres, "sandbox")
    port = postgres["port"]
    psql(postgres, "-v", "db=sandbox", "-v", "writer=gpucat_lake_writer", "-v", f"writer_password={WRITER_PASSWORD}",
         "-v", "reader=gpucat_lake_reader", "-v", f"reader_password={READER_PASSWORD}", "-f", str(ROLES_SQL), database="sandbox")  # fmt: skip
    assert "user=gpucat" in superuser_url
    writer = f"ducklake:postgres:dbname=sandbox host=127.0.0.1 port={port} user=gpucat_lake_writer password={WRITER_PASSWORD}"
    reader = f"ducklake:postgres:dbname=sandbox host=127.0.0.1 port={port} user=gpucat_lake_reader password={READER_PASSWORD}"
    data = Path(tempfile.mkdtemp(prefix="gpucat-sandbox-lake-"))
    con = db.connect(writer, lake_data=str(data))
    with tempfile.TemporaryDirectory() as work:
        options = pipeline.FetchOptions(workdir=Path(work), replay_dir=FIXTURES)
        runs = pipeline.refresh_sources(con, [get_source(s) for s in LAKE_SOURCES], options, prerequisites=False)
    con.close()
    assert [r.status for r in runs] == ["ok"] * len(LAKE_SOURCES)
    yield reader, writer, data
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(params=["file", "lake"])
def backend(request, tmp_path) -> Backend:
    if request.param == "file":
        folder = tmp_path / "warehouse"
        folder.mkdir()
        shutil.copy(request.getfixturevalue("catalog_db"), folder / "gpucat.duckdb")
        return Backend(str(folder / "gpucat.duckdb"), folder)
    reader, _, data = request.getfixturevalue("lake_warehouse")
    return Backend(reader, data, READER_PASSWORD)


ROW_COUNTS = "SELECT (SELECT count(*) FROM offer_versions), (SELECT count(*) FROM scrape_runs), (SELECT count(*) FROM gpu_models)"

ATTACKS = {
    "attach-detach-rewrite": "ATTACH '{other}' AS o (READ_ONLY false)",
    "reattach-self-writable": "ATTACH '{db}' AS w (READ_ONLY false)",
    "copy-to-file": "COPY (SELECT * FROM gpu_models) TO '{victim}'",
    "copy-over-a-warehouse-file": "COPY (SELECT * FROM read_parquet('{data_file}')) TO '{data_file}' (FORMAT parquet)",
    "export-database": "EXPORT DATABASE '{tmp}/exported'",
    "install-extension": "INSTALL httpfs",
    "load-extension": "LOAD httpfs",
    "re-enable-access": "SET enable_external_access = true",
    "unlock-config": "RESET lock_configuration",
    "read-local-file": "SELECT * FROM read_text('{victim}')",
    "two-statements": "SELECT 1; DELETE FROM offer_versions",
    "delete-read-only": "DELETE FROM offer_versions",
    "explain-analyze-copy": "EXPLAIN ANALYZE COPY (SELECT 1) TO '{victim}'",
    "postgres-query-metadata": "SELECT * FROM postgres_query('__ducklake_metadata_lake', 'SELECT pg_read_file(''/etc/hostname'')')",
    "postgres-scan-any-host": "SELECT * FROM postgres_scan('host=127.0.0.1 port=1 dbname=postgres', 'pg_catalog', 'pg_authid')",
    "postgres-execute": "SELECT * FROM postgres_execute('__ducklake_metadata_lake', 'SELECT pg_terminate_backend(1)')",
    "metadata-catalog": 'SELECT * FROM "__ducklake_metadata_lake".pg_catalog.pg_authid',
    "connection-string": "SELECT path FROM duckdb_databases()",
    "settings": "SELECT name, value FROM duckdb_settings()",
    "one-setting": "SELECT current_setting('allowed_paths')",
    "sql-in-a-string": "SELECT * FROM query('SELECT path FROM duckdb_databases()')",
    "pragma-database-list": "PRAGMA database_list",
    "lake-maintenance": "SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => true)",
    "empty": "",
    "only-comment": "/* nothing */",
}


def run_sql(backend: Backend, sql: str, *extra: str):
    return runner.invoke(app, ["sql", sql, "--db", backend.target, *extra])


def a_data_file(backend: Backend) -> Path:
    files = sorted(backend.files.rglob("*.parquet")) or sorted(backend.files.rglob("*.duckdb"))
    return files[0]


@pytest.mark.parametrize("write", [False, True], ids=["read-only", "write"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_fails_with_one_line_and_changes_no_byte(backend, tmp_path, attack, write):
    if write and attack == "delete-read-only":
        pytest.skip("--write allows changes to the warehouse itself")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    other = tmp_path / "other.duckdb"
    before = fingerprint(backend.files)
    rows_before = run_sql(backend, ROW_COUNTS, "--format", "csv").stdout
    assert rows_before.count("\n") == 2, rows_before
    sql = ATTACKS[attack].format(other=other, db=backend.target, victim=victim, tmp=tmp_path, data_file=a_data_file(backend))
    result = run_sql(backend, sql, *(["--write"] if write else []))
    assert result.exit_code != 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    if backend.password:
        assert backend.password not in result.output
    assert run_sql(backend, ROW_COUNTS, "--format", "csv").stdout == rows_before
    if not write:  # opening a file writable may checkpoint; what must not change is the content
        assert fingerprint(backend.files) == before
    assert victim.read_text() == "precious\n"
    assert not other.exists() and not (tmp_path / "exported").exists()


# Readers that no deny list named: the read-only session allows table functions by name, so each is
# refused wherever DuckDB's parse finds it (nested in a subquery, EXISTS, LATERAL, a join).
UNLISTED_READS = {
    "read-csv": "SELECT * FROM read_csv('{victim}')",
    "read-blob-in-a-scalar-subquery": "SELECT (SELECT content FROM read_blob('{victim}'))",
    "glob-in-exists": "SELECT 1 WHERE EXISTS (FROM glob('{tmp}/*'))",
    "sniff-csv-lateral": "SELECT * FROM gpu_models, LATERAL (SELECT * FROM sniff_csv('{victim}')) LIMIT 1",
    "parquet-metadata-join": "SELECT * FROM gpu_models POSITIONAL JOIN parquet_metadata('{data_file}')",
    "read-parquet-in-a-cte": "WITH f AS (SELECT * FROM read_parquet('{data_file}')) SELECT count(*) FROM f",
    "a-file-as-a-table": "SELECT * FROM '{victim}'",
    "a-quoted-file-as-a-table": 'SELECT * FROM "{data_file}"',
    "pragma-storage": "PRAGMA storage_info('gpu_models')",
}


@pytest.mark.parametrize("attack", sorted(UNLISTED_READS))
def test_read_only_table_functions_are_an_allow_list(backend, tmp_path, attack):
    victim = tmp_path / "victim.csv"
    victim.write_text("secret\nprecious\n")
    result = run_sql(backend, UNLISTED_READS[attack].format(victim=victim, tmp=tmp_path, data_file=a_data_file(backend)), "--format", "csv")
    assert result.exit_code == 1, result.output
    assert "precious" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "read-only" in lines[0], result.stderr


@pytest.mark.parametrize(
    ("sql", "first_lines"),
    [
        ("SELECT * FROM range(3) t(n)", ["n", "0"]),
        ("SELECT n FROM generate_series(2, 3) g(n)", ["n", "2"]),
        ("SELECT x FROM (SELECT unnest([5, 6]) AS x)", ["x", "5"]),
        ("SELECT table_name FROM duckdb_tables() WHERE table_name = 'gpu_models'", ["table_name", "gpu_models"]),
        ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT max(n) AS m FROM r", ["m", "3"]),
        ("SELECT name FROM pragma_table_info('gpu_models') WHERE name = 'gpu_model'", ["name", "gpu_model"]),
        ("PRAGMA table_info('gpu_models')", None),
        ("DESCRIBE gpu_models", None),
        ("SUMMARIZE SELECT 1 AS one", None),
    ],
    ids=["range", "generate-series", "unnest", "duckdb-tables", "recursive-cte", "pragma-table-info-function", "pragma-table-info", "describe", "summarize"],
)
def test_read_only_queries_still_compute_and_read_the_catalog(backend, sql, first_lines):
    result = run_sql(backend, sql, "--format", "csv")
    assert result.exit_code == 0, result.output
    if first_lines is not None:
        assert result.stdout.splitlines()[:2] == first_lines


def test_a_warehouse_table_macro_is_checked_by_its_body(backend, request):
    """gpucat's own table macro runs (twice in one statement: each call is checked); a macro that
    `--write` planted around a table function off the list is refused in a read-only session,
    however deeply wrapped. (A file reader in a macro body is refused where DuckDB binds it.)"""
    writer = backend
    if backend.password:
        _, url, _ = request.getfixturevalue("lake_warehouse")
        writer = Backend(url, backend.files, WRITER_PASSWORD)
    fit = "SELECT count(*) AS n FROM fit_offers(per_gpu_gb := 40, gpus := 1)"
    twice = run_sql(backend, f"{fit} UNION ALL {fit}", "--format", "csv")
    assert twice.exit_code == 0, twice.output
    for statement in ("CREATE MACRO sneaky() AS TABLE SELECT * FROM duckdb_extensions()", "CREATE MACRO wrapper() AS TABLE SELECT * FROM sneaky()"):
        created = run_sql(writer, statement, "--write")
        assert created.exit_code == 0, created.output
    try:
        for call in ("SELECT * FROM sneaky()", "SELECT * FROM wrapper()", f"{fit} UNION ALL SELECT count(*) FROM wrapper()"):
            result = run_sql(backend, call, "--format", "csv")
            assert result.exit_code == 1, (call, result.output)
            assert result.stderr.startswith("error: table function `duckdb_extensions` is not available in a read-only"), result.stderr
    finally:
        for name in ("wrapper", "sneaky"):
            run_sql(writer, f"DROP MACRO TABLE {name}", "--write")


def test_the_catalog_views_show_no_password(backend):
    result = run_sql(backend, "SHOW DATABASES", "--format", "csv")
    assert result.exit_code == 0, result.output
    assert "lake" in result.stdout or "gpucat" in result.stdout
    if backend.password:
        assert backend.password not in result.stdout


def test_write_changes_the_warehouse_only(backend, request):
    if backend.password:  # the lake's reader may not write; the writer's session is the one to try
        _, writer, _ = request.getfixturevalue("lake_warehouse")
        backend = Backend(writer, backend.files, WRITER_PASSWORD)
    result = run_sql(backend, "DELETE FROM rejected_rows", "--write")
    assert result.exit_code == 0, result.output
    check = run_sql(backend, "SELECT count(*) AS n FROM rejected_rows", "--format", "csv")
    assert check.stdout.splitlines() == ["n", "0"]


@pytest.mark.parametrize(
    "statement",
    ["DROP TABLE schema_migrations", "DROP TABLE scrape_runs", "ALTER TABLE offer_versions RENAME TO old_offers",
     "CREATE OR REPLACE TABLE scrape_runs AS SELECT 1 AS run_id", "DROP TABLE interruption_rate_versions"],
)  # fmt: skip
def test_write_cannot_drop_or_alter_the_bookkeeping(backend, request, statement):
    if backend.password:
        _, writer, _ = request.getfixturevalue("lake_warehouse")
        backend = Backend(writer, backend.files, WRITER_PASSWORD)
    before = run_sql(backend, ROW_COUNTS, "--format", "csv").stdout
    result = run_sql(backend, statement, "--write")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and "bookkeeping" in result.stderr
    assert run_sql(backend, ROW_COUNTS, "--format", "csv").stdout == before


def test_python_names_are_never_tables(backend):
    result = run_sql(backend, "SELECT * FROM con")
    assert result.exit_code == 1
    assert "con" in result.stderr and "Python" not in result.stderr


def test_the_lake_reader_role_cannot_reach_the_server(lake_warehouse, postgres):
    """Below the sandbox: the reader's PostgreSQL role may read DuckLake's tables and nothing else."""
    import duckdb

    reader, _, _ = lake_warehouse
    con = duckdb.connect(config={"autoload_known_extensions": False})
    con.execute(f"LOAD '{lake.extension_files()['postgres_scanner']}'")
    con.execute(f"CREATE TEMPORARY SECRET (TYPE postgres, PASSWORD '{READER_PASSWORD}')")
    con.execute(f"ATTACH 'dbname=sandbox host=127.0.0.1 port={postgres['port']} user=gpucat_lake_reader' AS pg (TYPE postgres, READ_ONLY)")
    assert con.execute("SELECT count(*) FROM postgres_query('pg', 'SELECT * FROM ducklake_snapshot')").fetchone()[0] > 0
    allowed = []
    for forbidden in ("SELECT pg_read_file('/etc/hostname')", "SELECT rolname FROM pg_authid",
                      "INSERT INTO ducklake_metadata VALUES ('x', 'y', NULL, NULL)"):  # fmt: skip
        try:
            con.execute("SELECT * FROM postgres_query('pg', $q)", {"q": forbidden}).fetchall()
            allowed.append(forbidden)
        except duckdb.Error as exc:
            assert re.search("(?i)permission denied|must be|read-only", str(exc)), exc
    assert allowed == []
    con.close()
