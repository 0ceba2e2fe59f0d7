"""Migrations on a DuckLake: the constraints it lacks, dropped from the statements and checked on the rows.

DuckLake rejects PRIMARY KEY, UNIQUE and CHECK. `portable_sql` writes a migration's CREATE TABLE
again without them, from the table DuckDB itself built from the statement (a primary key's
columns keep NOT NULL), and says what it left out (`Dropped`), so `violations` can count the rows
that would have broken each one. Which constraints a lake lacks,
and what upholds each instead, is listed in tests/warehouse/test_lake.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import duckdb


@dataclass(frozen=True)
class Dropped:
    """A constraint `portable_sql` removed: a key's columns, or a check's expression."""

    table: str
    kind: str  # "key" | "check"
    text: str


_CREATE_TABLE = re.compile(r"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?\w+\s*\(", re.IGNORECASE)
# What a table is, as DuckDB's catalog holds it once the statement ran: its columns in order, and
# the constraints a lake lacks (NOT NULL it keeps, and says per column).
_COLUMNS = """SELECT table_name, column_name, data_type, column_default, is_nullable FROM duckdb_columns()
              WHERE database_name = 'memory' ORDER BY column_index"""
_CONSTRAINTS = """SELECT constraint_type, expression, constraint_column_names FROM duckdb_constraints()
                  WHERE database_name = 'memory' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'CHECK') ORDER BY constraint_index"""


def portable_sql(statement: str) -> tuple[str, list[Dropped]]:
    """The statement without the constraints DuckLake rejects, and what was dropped.

    The contract: a CREATE TABLE becomes the same table less its PRIMARY KEY, UNIQUE and CHECK
    constraints, i.e. the same columns in the same order with the same types, defaults and NOT
    NULL (a primary key's columns are NOT NULL). It is not parsed here: DuckDB runs the
    statement on an empty in-memory database, and the table is written back from its catalog
    (`duckdb_columns`), with the constraints `duckdb_constraints` lists returned as `Dropped`.
    Any other statement is returned as is (only CREATE TABLE carries constraints in our
    migrations; one elsewhere fails loudly on the lake, and the lake migration test catches it).
    tests/warehouse/test_lake.py checks the contract on every migration against a real DuckLake.
    """
    head = _CREATE_TABLE.match(statement)
    if not head:
        return statement, []
    scratch = duckdb.connect(":memory:")
    try:
        scratch.execute(statement)
        columns = scratch.execute(_COLUMNS).fetchall()
        constraints = scratch.execute(_CONSTRAINTS).fetchall()
    finally:
        scratch.close()
    table = columns[0][0]
    body = ",\n".join(
        f'    "{name}" {data_type}' + (f" DEFAULT {default}" if default is not None else "") + ("" if nullable else " NOT NULL")
        for _, name, data_type, default, nullable in columns
    )
    dropped = [
        Dropped(table, "check", _squash(expression)) if kind == "CHECK" else Dropped(table, "key", ", ".join(names))
        for kind, expression, names in constraints
    ]
    return f"{head.group(0)}\n{body}\n)", dropped


def _squash(text: str) -> str:
    return " ".join(text.split())


def lake_statement(statement: str) -> str:
    """What a migration statement becomes on a lake (the rewrite `db.migrate` applies)."""
    return portable_sql(statement)[0]


def macro_statement(statement: str) -> str:
    """Macros live in the session, not in the lake (DuckLake stores tables and views only)."""
    return re.sub(r"^(\s*CREATE\s+(?:OR\s+REPLACE\s+)?)MACRO\b", r"\1TEMP MACRO", statement, count=1, flags=re.IGNORECASE)


def dropped_constraints(statements: list[str]) -> list[Dropped]:
    """Every constraint the lake lacks, from the migrations' statements in order.

    A table rebuilt under a new name (`scrape_runs_v7` renamed to `scrape_runs`) keeps the
    newest definition; so does a dropped and re-created one.
    """
    by_table: dict[str, list[Dropped]] = {}
    renames: dict[str, str] = {}
    for statement in statements:
        rename = re.match(r"^\s*ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)", statement, re.IGNORECASE)
        if rename:
            renames[rename.group(1)] = rename.group(2)
            if rename.group(1) in by_table:
                by_table[rename.group(2)] = [Dropped(rename.group(2), d.kind, d.text) for d in by_table.pop(rename.group(1))]
            continue
        _, dropped = portable_sql(statement)
        if dropped:
            by_table[dropped[0].table] = dropped
    return [d for table in sorted(by_table) for d in by_table[table]]


def violation_queries(dropped: list[Dropped]) -> Iterator[tuple[Dropped, str]]:
    """One query per dropped constraint that counts the rows breaking it (0 = it holds)."""
    for d in dropped:
        if d.kind == "key":
            yield d, f"SELECT count(*) FROM (SELECT {d.text} FROM {d.table} GROUP BY ALL HAVING count(*) > 1)"
        else:
            yield d, f"SELECT count(*) FROM {d.table} WHERE NOT coalesce(({d.text}), true)"


def violations(con: Any, dropped: list[Dropped], tables: set[str] | None = None) -> list[str]:
    """The dropped constraints that rows in the lake break, in words (empty when all hold)."""
    found = []
    for d, sql in violation_queries(dropped):
        if tables is not None and d.table not in tables:
            continue
        count = con.execute(sql).fetchone()[0]
        if count:
            what = f"duplicate ({d.text})" if d.kind == "key" else f"rows failing CHECK ({d.text})"
            found.append(f"{d.table}: {count} {what}")
    return found
