"""Opening the DuckDB file: path resolution, numbered migrations, macros, reference data."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from schemas.errors import DatabaseMissing, GpucatError

HERE = Path(__file__).parent
MIGRATIONS = HERE / "migrations"
SQL = HERE / "sql"
DEFAULT_DB = "gpucat.duckdb"


def db_path(explicit: str | Path | None = None) -> Path:
    """`--db` wins, then `GPUCAT_DB`, then ./gpucat.duckdb."""
    return Path(explicit or os.environ.get("GPUCAT_DB") or DEFAULT_DB)


def connect(path: str | Path | None = None, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (and for writers create and migrate) the warehouse. Readers need an existing file."""
    target = db_path(path)
    if str(target) != ":memory:" and read_only and not target.exists():
        raise DatabaseMissing(f"no database at {target}; run `gpucat refresh` first or pass --db")
    try:
        con = duckdb.connect(str(target), read_only=read_only)
    except duckdb.IOException as exc:
        raise GpucatError(f"cannot open {target}: {str(exc).splitlines()[0]}") from None
    con.execute("SET TimeZone = 'UTC'")
    if read_only:
        pending = pending_migrations(con)
        if pending:
            con.close()
            raise DatabaseMissing(f"{target} needs migrations {', '.join(pending)}; run `gpucat refresh` once to upgrade it")
    else:
        migrate(con)
        run_script(con, SQL / "macros.sql")
    return con


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS.glob("[0-9][0-9][0-9]_*.sql"))


def _applied(con: duckdb.DuckDBPyConnection) -> set[str]:
    # duckdb_tables() rather than information_schema: a cold read of the latter costs a read command ~0.1 s.
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_migrations'").fetchone()
    if not exists or not exists[0]:
        return set()
    return {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}


def pending_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    applied = _applied(con)
    return [f.stem for f in migration_files() if f.stem not in applied]


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply numbered migrations not yet applied, each in its own transaction."""
    con.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)")
    done = []
    for version in pending_migrations(con):
        with transaction(con):
            run_script(con, MIGRATIONS / f"{version}.sql")
            con.execute("INSERT INTO schema_migrations VALUES ($v, now())", {"v": version})
        done.append(version)
    return done


def run_script(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    for statement in split_statements(path.read_text(encoding="utf-8")):
        con.execute(statement)


def split_statements(sql: str) -> list[str]:
    """Split a script on semicolons that end a line (our .sql files keep one statement per block)."""
    without_comments = re.sub(r"--[^\n]*", "", sql)
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", without_comments) if s.strip()]


def query_sql(name: str) -> str:
    """A named query from warehouse/sql/<name>.sql."""
    return (SQL / f"{name}.sql").read_text(encoding="utf-8")


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    con.begin()
    try:
        yield
    except BaseException:
        con.rollback()
        raise
    con.commit()


def load_reference(con: duckdb.DuckDBPyConnection, frames: Mapping[str, Any]) -> dict[str, int]:
    """Replace reference tables with validated frames (table name -> polars frame), in one transaction.

    Which tables and files these are is the caller's list (`gpucat.pipeline.REFERENCE_TABLES`);
    table names come from that list, never from user input.
    """
    with transaction(con):
        for table, frame in frames.items():
            con.execute(f"DELETE FROM {table}")
            con.register("reference_frame", frame)
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM reference_frame")
            con.unregister("reference_frame")
    return {table: frame.height for table, frame in frames.items()}
