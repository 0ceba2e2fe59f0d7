"""Migrations on a DuckLake: the constraints it lacks, dropped from the statements and checked on the rows.

DuckLake rejects PRIMARY KEY, UNIQUE and CHECK. `portable_sql` removes them from a migration's
CREATE TABLE (a primary key's columns keep NOT NULL) and says what it removed (`Dropped`), so
`violations` can count the rows that would have broken each one. Which constraints a lake lacks,
and what upholds each instead, is listed in tests/warehouse/test_lake.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Dropped:
    """A constraint `portable_sql` removed: a key's columns, or a check's expression."""

    table: str
    kind: str  # "key" | "check"
    text: str


_CREATE_TABLE = re.compile(r"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\(", re.IGNORECASE)
_COLUMN_CONSTRAINT = re.compile(r"\s*\b(PRIMARY\s+KEY|UNIQUE|CHECK)\b", re.IGNORECASE)
_TABLE_CONSTRAINT = re.compile(r"^\s*(?:CONSTRAINT\s+\w+\s+)?(PRIMARY\s+KEY|UNIQUE|CHECK)\s*\(", re.IGNORECASE)


def portable_sql(statement: str) -> tuple[str, list[Dropped]]:
    """The statement without the constraints DuckLake rejects, and what was dropped.

    Only CREATE TABLE carries them in our migrations; any other statement is returned as is
    (a constraint elsewhere fails loudly on the lake, and the lake migration test catches it).
    """
    match = _CREATE_TABLE.match(statement)
    if not match:
        return statement, []
    table = match.group(1)
    open_at = match.end() - 1
    close_at = _group_end(statement, open_at)
    inside = statement[open_at + 1 : close_at - 1]
    kept: list[str] = []
    dropped: list[Dropped] = []
    primary: set[str] = set()
    for item in _top_level_split(inside):
        whole = _TABLE_CONSTRAINT.match(item)
        if whole:
            group = statement_group(item, whole.end() - 1)
            kind = whole.group(1).upper()
            dropped.append(Dropped(table, "check" if kind == "CHECK" else "key", _squash(group)))
            if kind.startswith("PRIMARY"):
                primary.update(c.strip() for c in group.split(","))
            continue
        kept.append(_drop_column_constraints(table, item, dropped))
    # A primary key's columns are NOT NULL; without the key they say so themselves.
    kept = [_not_null(item) if item.split() and item.split()[0] in primary else item for item in kept]
    body = ",".join(kept).rstrip() + inside[len(inside.rstrip()) :]  # the closing line stays as written
    return statement[: open_at + 1] + body + statement[close_at - 1 :], dropped


def statement_group(text: str, open_at: int) -> str:
    """The inside of the parenthesized group opening at text[open_at]."""
    return text[open_at + 1 : _group_end(text, open_at) - 1]


def _drop_column_constraints(table: str, item: str, dropped: list[Dropped]) -> str:
    column = item.split()[0] if item.split() else ""
    masked = _mask(item)
    out, pos, primary = [], 0, False
    for found in _COLUMN_CONSTRAINT.finditer(masked):
        kind = re.sub(r"\s+", " ", found.group(1).upper())
        end = found.end()
        if kind == "CHECK":
            open_at = masked.index("(", end)
            end = _group_end(item, open_at)
            dropped.append(Dropped(table, "check", _squash(item[open_at + 1 : end - 1])))
        else:
            dropped.append(Dropped(table, "key", column))
            primary = primary or kind == "PRIMARY KEY"
        out.append(item[pos : found.start()])
        pos = end
    out.append(item[pos:])
    kept = "".join(out)
    return _not_null(kept) if primary else kept


def _not_null(item: str) -> str:
    if re.search(r"\bNOT\s+NULL\b", _mask(item), re.IGNORECASE):
        return item
    stripped = item.rstrip()
    return stripped + " NOT NULL" + item[len(stripped) :]


def _mask(text: str) -> str:
    """`text` with quoted strings and parenthesized groups blanked, so keywords inside them do not match."""
    chars, depth, quote = [], 0, None
    for ch in text:
        if quote:
            chars.append(" ")
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
            chars.append(" ")
        elif ch == "(":
            depth += 1
            chars.append("(" if depth == 1 else " ")
        elif ch == ")":
            depth -= 1
            chars.append(")" if depth == 0 else " ")
        else:
            chars.append(ch if depth == 0 else " ")
    return "".join(chars)


def _group_end(text: str, open_at: int) -> int:
    """Index just past the parenthesis closing the one at text[open_at] (quotes respected)."""
    depth, quote = 0, None
    for i in range(open_at, len(text)):
        ch = text[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError(f"unbalanced parentheses in: {text[:80]}")


def _top_level_split(body: str) -> list[str]:
    masked = _mask(body)
    items, start = [], 0
    for i, ch in enumerate(masked):
        if ch == ",":
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return items


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
