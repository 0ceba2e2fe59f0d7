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
- In a read-only session, table functions are an allow-list, not a deny list: DuckDB's own parse of
  the statement (`json_serialize_sql`) names every table function it calls, wherever it is nested,
  and each must be one that computes rows or reads the warehouse's catalog (`range`, `unnest`,
  `duckdb_tables()`, DuckLake's snapshot views...): a file reader (`read_csv`, `glob`, `sniff_csv`)
  or an extension's scanner is refused without being named in advance. A table named like a file
  (`FROM 'x.csv'`, which DuckDB answers by reading the file) is refused the same way, and a PRAGMA
  (which has no such parse) must be one of a few that describe tables.
- On `--write`, statements that drop, alter or replace gpucat's own bookkeeping tables (the
  migration ledger, the run log, the version histories): a refresh cannot recover from those.

Then the configuration is set (a memory limit, no Python variables as tables, no external
access) and locked, so the statement cannot undo any of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import duckdb

from gpucat.schemas.errors import QueryError

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
# Table functions a read-only statement may call: they compute rows or read the warehouse's own catalog.
READ_TABLE_FUNCTIONS = DUCKLAKE_READS | {
    "range", "generate_series", "unnest", "duckdb_tables", "duckdb_views", "duckdb_columns", "duckdb_schemas",
    "duckdb_constraints", "duckdb_indexes", "duckdb_types", "duckdb_functions", "duckdb_keywords", "duckdb_sequences",
    "pragma_table_info", "pragma_show", "pragma_version",
}  # fmt: skip
READ_PRAGMAS = frozenset({"table_info", "show_tables", "show_tables_expanded", "show", "version"})
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
    if not write:
        check_reads(con, sql, names)
    if write and kind in (duckdb.StatementType.DROP, duckdb.StatementType.ALTER, duckdb.StatementType.CREATE):
        replaces = kind != duckdb.StatementType.CREATE or re.match(r"\s*create\s+or\s+replace\b", sql, re.IGNORECASE)
        touched = sorted({n for n in names if is_bookkeeping(n)})
        if replaces and touched:
            raise QueryError(f"{', '.join(touched)} is gpucat's own bookkeeping: `gpucat sql --write` cannot drop, alter or replace it")


def check_reads(con: duckdb.DuckDBPyConnection, sql: str, names: list[str], macros: dict[str, list[str]] | None = None) -> None:
    """Raise QueryError unless every table function the query calls is in READ_TABLE_FUNCTIONS, or a
    table macro of the warehouse (gpucat's `fit_offers`) whose body passes this same check, and no
    table it names is a file; a PRAGMA must be in READ_PRAGMAS."""
    try:
        tree = json.loads(con.execute("SELECT json_serialize_sql($sql)", {"sql": sql}).fetchone()[0])
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from None
    if tree.get("error"):
        if names[:1] == ["pragma"]:
            pragma = names[1] if len(names) > 1 else ""
            if pragma not in READ_PRAGMAS:
                raise QueryError(f"PRAGMA {pragma} is not available in a read-only `gpucat sql` session (allowed: {', '.join(sorted(READ_PRAGMAS))})")
            return
        raise QueryError(f"this statement cannot be checked for a read-only `gpucat sql` session: {tree.get('error_message', 'not a query')}")
    for node in _nodes(tree):
        if node.get("type") == "TABLE_FUNCTION":
            name = str((node.get("function") or {}).get("function_name", "")).lower()
            if name in READ_TABLE_FUNCTIONS:
                continue
            if macros is None:
                macros = _table_macros(con)
            if name in macros:
                # emptied once checked: a macro is checked once, and one that calls itself ends here
                bodies, macros[name] = macros[name], []
                for body in bodies:
                    check_reads(con, body, statement_names(body), macros)
            else:
                raise QueryError(
                    f"table function `{name}` is not available in a read-only `gpucat sql` session (it may read outside the warehouse); "
                    f"allowed: {', '.join(sorted(READ_TABLE_FUNCTIONS))}"
                )
        elif node.get("type") == "BASE_TABLE" and _FILE_LIKE.search(str(node.get("table_name", ""))):
            raise QueryError(f"`{node.get('table_name')}` looks like a file: a read-only `gpucat sql` session reads the warehouse's tables only")


def _table_macros(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """The warehouse's own table macros (not DuckDB's), name -> the body of each overload."""
    rows = con.execute(
        "SELECT lower(function_name), macro_definition FROM duckdb_functions() WHERE function_type = 'table_macro' AND NOT internal"
    ).fetchall()
    macros: dict[str, list[str]] = {}
    for name, body in rows:
        macros.setdefault(name, []).append(body or "")
    return macros


# DuckDB reads a table named like a file path or URL (`FROM 'prices.csv'`); gpucat's tables are plain names.
_FILE_LIKE = re.compile(r"[./\\:~]")


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every object in a parsed statement, depth first."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


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
