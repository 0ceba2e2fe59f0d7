"""The session `gpucat sql` runs a user's statement in, on a DuckDB file and on a lake alike.

What it refuses, and why each guard is needed on top of DuckDB's own settings:
- More than one statement, or a statement of a kind the session does not allow: read-only runs
  queries only (SELECT, WITH, FROM, VALUES, SHOW, DESCRIBE, SUMMARIZE, PRAGMA reads); `--write` adds
  INSERT, UPDATE, DELETE, MERGE, CREATE, DROP and ALTER. COPY, EXPORT, ATTACH, SET, LOAD, CALL
  and EXPLAIN (whose ANALYZE runs what it explains) are never allowed. On a lake DuckDB must be
  allowed to read and write the lake's data folder, so `enable_external_access = false` alone
  would let `COPY ... TO '<a lake data file>'` rewrite the warehouse under DuckLake's feet.
- Names that reach past the warehouse, wherever they appear in the statement (DuckDB's own
  tokenizer finds them; a string literal is never a name): PostgreSQL's functions, which connect
  to any host and read any database or server file; the DuckLake metadata catalog
  (`__ducklake_metadata_<lake>`); DuckLake's maintenance functions (they delete or rewrite files);
  the catalog views and settings that show a connection string (`duckdb_databases()`,
  `duckdb_settings()`, `current_setting`); and `query()`/`query_table()`, which run SQL held in a
  string and so would hide any name from this check.
- On `--write`, statements that drop, alter or replace gpucat's own bookkeeping tables (the
  migration ledger, the run log, the version histories): a refresh cannot recover from those.

Then the configuration is set (a memory limit, no Python variables as tables, no external
access) and locked, so the statement cannot undo any of it.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb

from schemas.errors import QueryError

READ_STATEMENTS = frozenset({duckdb.StatementType.SELECT})
WRITE_STATEMENTS = READ_STATEMENTS | {
    duckdb.StatementType.INSERT, duckdb.StatementType.UPDATE, duckdb.StatementType.DELETE, duckdb.StatementType.MERGE_INTO,
    duckdb.StatementType.CREATE, duckdb.StatementType.DROP, duckdb.StatementType.ALTER,
}  # fmt: skip

# Names a statement may not mention (lowercased, unquoted). Prefixes first, then whole names.
DENIED_PREFIXES = ("postgres_", "__ducklake_metadata", "ducklake_")
DUCKLAKE_READS = frozenset({
    "ducklake_snapshots", "ducklake_current_snapshot", "ducklake_last_committed_snapshot", "ducklake_table_info",
    "ducklake_table_changes", "ducklake_table_insertions", "ducklake_table_deletions", "ducklake_list_files",
})  # fmt: skip
DENIED_NAMES = frozenset({
    "pg_clear_cache", "read_postgres_binary",  # the postgres extension's, without its prefix
    "duckdb_databases", "database_list", "pragma_database_list", "duckdb_settings", "current_setting",
    "duckdb_secrets", "which_secret", "getenv", "query", "query_table", "json_execute_serialized_sql",
})  # fmt: skip
# gpucat's bookkeeping: `--write` may change rows elsewhere, never drop, alter or replace these.
BOOKKEEPING = frozenset({"schema_migrations", "scrape_runs", "lake_commits"})
BOOKKEEPING_SUFFIX = "_versions"
DEFAULT_MEMORY_LIMIT = "2GB"


def check_statement(con: duckdb.DuckDBPyConnection, sql: str, *, write: bool) -> None:
    """Raise QueryError unless `sql` is exactly one statement this session allows."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from None
    if len(statements) != 1:
        raise QueryError("give exactly one SQL statement" + (f" (got {len(statements)})" if statements else ""))
    kind = statements[0].type
    allowed = WRITE_STATEMENTS if write else READ_STATEMENTS
    if kind not in allowed:
        what = kind.name.replace("_", " ")
        if not write and kind in WRITE_STATEMENTS:
            raise QueryError(f"{what} statements are not allowed in a read-only `gpucat sql` session; pass --write to change the warehouse")
        raise QueryError(f"{what} statements are not allowed in `gpucat sql`")
    names = statement_names(sql)
    for name in names:
        if denied(name):
            raise QueryError(f"`{name}` is not available in `gpucat sql` (it reaches outside the warehouse or shows its credentials)")
    if write and kind in (duckdb.StatementType.DROP, duckdb.StatementType.ALTER, duckdb.StatementType.CREATE):
        replaces = kind != duckdb.StatementType.CREATE or re.match(r"\s*create\s+or\s+replace\b", sql, re.IGNORECASE)
        touched = sorted({n for n in names if is_bookkeeping(n)})
        if replaces and touched:
            raise QueryError(f"{', '.join(touched)} is gpucat's own bookkeeping: `gpucat sql --write` cannot drop, alter or replace it")


def statement_names(sql: str) -> list[str]:
    """Every identifier and keyword in `sql`, lowercased with quotes taken off (literals and comments skipped)."""
    tokens = duckdb.tokenize(sql)
    names = []
    for i, (start, kind) in enumerate(tokens):
        if kind not in (duckdb.token_type.identifier, duckdb.token_type.keyword):
            continue
        end = tokens[i + 1][0] if i + 1 < len(tokens) else len(sql)
        text = sql[start:end].strip()
        if text.startswith('"'):
            text = text[1:-1].replace('""', '"') if text.endswith('"') and len(text) > 1 else text[1:]
        names.append(text.lower())
    return names


def denied(name: str) -> bool:
    if name in DENIED_NAMES:
        return True
    return name.startswith(DENIED_PREFIXES) and name not in DUCKLAKE_READS


def is_bookkeeping(name: str) -> bool:
    return name in BOOKKEEPING or name.endswith(BOOKKEEPING_SUFFIX)


def lock_down(con: duckdb.DuckDBPyConnection, *, memory_limit: str = DEFAULT_MEMORY_LIMIT) -> None:
    """Set the session's limits and lock its configuration (the connection serves nothing else after)."""
    settings: list[tuple[str, Any]] = [
        ("SET memory_limit = $v", memory_limit),
        ("SET python_enable_replacements = false", None),
        ("SET enable_external_access = false", None),
        ("SET lock_configuration = true", None),
    ]
    for statement, value in settings:
        try:
            con.execute(statement, {"v": value} if value is not None else None)
        except duckdb.Error as exc:
            raise QueryError(f"cannot set up the sql session: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
