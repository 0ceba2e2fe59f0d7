"""The team warehouse: a DuckLake catalog instead of the DuckDB file.

DuckLake keeps the catalog's metadata in a database several machines reach (PostgreSQL) and
the rows as Parquet files under a data path, so refreshes of different sources on different
machines commit at once while readers query. gpucat runs the same migrations, SQL files and
CLI on it; `warehouse.db.connect` hands a `ducklake:` URL here.

- Extensions come from the `duckdb-extension-ducklake` and `duckdb-extension-postgres` wheels
  (pinned with DuckDB in pyproject.toml) and load from their installed files, with DuckDB's
  automatic install and load off: nothing is downloaded at run time.
- DuckLake has no PRIMARY KEY, UNIQUE or CHECK constraints, so `portable_sql` drops them from
  the migrations and names what it dropped (`Dropped`). The writers keep those keys unique by
  construction (run ids are fresh uuid4s; reference tables are replaced from frames whose keys
  pandera checked, and `check_constraints` re-checks them before the commit; validators are
  MERGEd per source), and `violations` lists any row that breaks a dropped constraint.
- Commits are optimistic. DuckLake itself retries a commit that raced another one without
  touching the same data; a real conflict (both deleted from one data file, say) fails the
  commit. `LakeConnection` then replays the transaction's statements against the newest
  snapshot, a bounded number of times with backoff. That is sound because no transaction body
  in gpucat branches on what it reads: the statements alone are the transaction. Every write
  transaction first bumps a one-row ledger (`LEDGER`), so overlapping writes always conflict and
  so serialize: a key inserted by two writers at once cannot commit twice.
"""

from __future__ import annotations

import logging
import os
import random
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import util as importlib_util
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from schemas.errors import GpucatError

PREFIX = "ducklake:"
WAREHOUSE_ENV = "GPUCAT_WAREHOUSE"
DATA_ENV = "GPUCAT_LAKE_DATA"
CATALOG = "lake"  # the name the lake is attached under; every statement runs with it as default
# A conflicting transaction is replayed at most this many more times, waiting with full jitter.
RETRIES = 8
FIRST_BACKOFF_S = 0.05
MAX_BACKOFF_S = 2.0
# The wheels keep each extension under extensions/v<duckdb version>/<file>; the postgres file
# holds the extension DuckDB calls postgres_scanner, and DuckDB finds an extension's entry
# point from the file's name, so that one is loaded through a link with the right name.
EXTENSIONS = {"postgres_scanner": ("duckdb_extension_postgres", "postgres"), "ducklake": ("duckdb_extension_ducklake", "ducklake")}
OPTIONAL_EXTENSIONS = {"httpfs": ("duckdb_extension_httpfs", "httpfs")}

T = TypeVar("T")
log = logging.getLogger(__name__)
# What every session (a connection, or a cursor of one) runs first: the lake as default catalog.
SESSION = (f"USE {CATALOG}", "SET TimeZone = 'UTC'")
# The lake's one-row ledger of write transactions. Each one updates it first, so any two that
# overlap in time conflict and the later one replays on the newest snapshot: writes behave as if
# taken in turns, as on the file. Without it, two inserts of the same key (a reference table's
# first load, a new source loaded by two workers) would both commit, since appends never conflict.
LEDGER = "lake_commits"
LEDGER_SQL = (
    f"CREATE TABLE IF NOT EXISTS {LEDGER} (commits BIGINT NOT NULL)",
    f"INSERT INTO {LEDGER} SELECT 0 WHERE NOT EXISTS (SELECT * FROM {LEDGER})",
)
CLAIM = f"UPDATE {LEDGER} SET commits = commits + 1"


def is_lake(target: object) -> bool:
    """A DuckLake URL (`ducklake:postgres:...`, or `ducklake:<file>` for a single machine)."""
    return isinstance(target, str) and target.startswith(PREFIX)


def describe(url: str) -> str:
    """The URL for messages: a password in the connection string is never shown."""
    return re.sub(r"(password\s*=\s*)(\S+)", r"\1***", url, flags=re.IGNORECASE)


def data_path(env: Mapping[str, str] = os.environ) -> str | None:
    """Where new Parquet files go: $GPUCAT_LAKE_DATA, a folder made absolute, or an object-store URL.

    Only a new lake needs it: the lake records its data path, and later opens read it from there.
    """
    value = env.get(DATA_ENV)
    if not value:
        return None
    if re.match(r"^[a-z][a-z0-9+.-]*://", value):
        return value if value.endswith("/") else value + "/"
    return str(Path(value).expanduser().resolve()) + os.sep


# --- extensions ---------------------------------------------------------------------------


def extension_files(version: str = duckdb.__version__) -> dict[str, Path]:
    """Extension name -> the file to LOAD, from the installed wheels of this DuckDB's version.

    httpfs (object-store data paths) is loaded when its wheel is installed; it is not a dependency.
    """
    found: dict[str, Path] = {}
    for name, (package, stem) in {**EXTENSIONS, **OPTIONAL_EXTENSIONS}.items():
        path = _wheel_file(package, stem, version)
        if path is None and name in OPTIONAL_EXTENSIONS:
            continue
        if path is None:
            wheel = package.replace("_", "-")
            raise GpucatError(f"the DuckLake warehouse needs the {wheel} package built for DuckDB {version}; run `uv sync` (pyproject.toml pins them)")
        found[name] = path if stem == name else _named_link(path, name)
    return found


def _wheel_file(package: str, stem: str, version: str) -> Path | None:
    spec = importlib_util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "extensions" / f"v{version}" / f"{stem}.duckdb_extension"
    return path if path.is_file() else None


def _named_link(target: Path, name: str) -> Path:
    """A link `<name>.duckdb_extension` to `target` in a cache folder (made once, then reused)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpucat" / "duckdb-extensions" / target.parent.name
    for folder in (base, Path(tempfile.gettempdir()) / f"gpucat-duckdb-extensions-{os.getuid() if hasattr(os, 'getuid') else 0}" / target.parent.name):
        link = folder / f"{name}.duckdb_extension"
        try:
            if link.is_symlink() and Path(os.readlink(link)) == target:
                return link
            folder.mkdir(parents=True, exist_ok=True)
            staging = folder / f".{name}.{os.getpid()}.link"
            staging.unlink(missing_ok=True)
            staging.symlink_to(target)
            os.replace(staging, link)  # atomic: a concurrent process sees the old link or the new one
            return link
        except OSError:
            continue
    raise GpucatError(f"cannot make a link to {target} in {base} or the temp folder")


# --- opening ------------------------------------------------------------------------------


def attach(url: str, *, read_only: bool = False, env: Mapping[str, str] = os.environ) -> duckdb.DuckDBPyConnection:
    """A fresh in-memory DuckDB with the lake attached as `lake` and made the default catalog.

    The first ATTACH of a new lake creates DuckLake's own tables in PostgreSQL; writers that
    do so at the same moment collide there, and the losers attach again to find them made.
    """
    for attempt in range(RETRIES + 1):
        try:
            return _attach(url, read_only, env)
        except _CreatedConcurrently:
            if attempt == RETRIES:
                raise GpucatError(f"cannot open the DuckLake warehouse {describe(url)}: other writers kept creating it") from None
        time.sleep(backoff_s(attempt))
    raise AssertionError("unreachable")


class _CreatedConcurrently(Exception):
    """Another process created the lake's metadata tables while this one tried to."""


def _attach(url: str, read_only: bool, env: Mapping[str, str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        files = extension_files()
        needed = ["ducklake"] + (["postgres_scanner"] if url[len(PREFIX):].startswith("postgres:") else []) + [n for n in OPTIONAL_EXTENSIONS if n in files]
        for name in needed:
            con.execute(f"LOAD '{_literal(str(files[name]))}'")
        options = []
        data = data_path(env)
        if data and not read_only and "://" in data and "httpfs" not in files:
            raise GpucatError(f"an object-store data path ({data}) needs DuckDB's httpfs extension: uv pip install duckdb-extension-httpfs=={duckdb.__version__}")
        if data and not read_only:
            options.append(f"DATA_PATH '{_literal(data)}'")
        if read_only:
            options.append("READ_ONLY")
        suffix = f" ({', '.join(options)})" if options else ""
        # ATTACH takes no parameters; the URL is the user's own configuration, quoted as a literal.
        con.execute(f"ATTACH '{_literal(url)}' AS {CATALOG}{suffix}")
        for statement in SESSION:
            con.execute(statement)
        # `gpucat sql` turns file access off (catalog.SANDBOX); the lake's own files stay readable.
        row = con.execute(f"SELECT data_path FROM ducklake_settings('{CATALOG}')").fetchone()
        if row and row[0]:
            con.execute(f"SET allowed_directories = ['{_literal(row[0])}']")
    except duckdb.Error as exc:
        con.close()
        if "duplicate key value" in str(exc) or "already exists" in str(exc):
            raise _CreatedConcurrently from None
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        hint = f"; a new lake needs ${DATA_ENV} (a folder or an object-store URL for its Parquet files)" if "DATA_PATH" in str(exc) else ""
        raise GpucatError(f"cannot open the DuckLake warehouse {describe(url)}: {describe(first)}{hint}") from None
    except GpucatError:
        con.close()
        raise
    return con


def _literal(text: str) -> str:
    return text.replace("'", "''")


# --- migrations on a lake -----------------------------------------------------------------


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


# --- conflicts and retries ----------------------------------------------------------------


def is_conflict(exc: BaseException) -> bool:
    """DuckLake's failed commit: another transaction changed what this one changed."""
    text = str(exc).lower()
    return isinstance(exc, duckdb.Error) and ("conflict" in text or "failed to commit" in text)


def backoff_s(attempt: int, rng: random.Random = random.Random()) -> float:
    """Full jitter: two writers that collided should not collide again at the same instant."""
    return rng.uniform(0.0, min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2**attempt))


def retry_conflicts(fn: Callable[[], T], *, retries: int = RETRIES, sleep: Callable[[float], None] = time.sleep) -> T:
    """`fn()`, again after a conflict, at most `retries` more times."""
    for attempt in range(retries + 1):
        try:
            return fn()
        except duckdb.Error as exc:
            if not is_conflict(exc) or attempt == retries:
                raise
        sleep(backoff_s(attempt))
    raise AssertionError("unreachable")


class LakeConnection:
    """A writer's connection to the lake: a transaction that loses a conflict is replayed.

    Between `begin()` and `commit()` it keeps the transaction's statements (and the frames it
    registered, in order), the first of them the ledger's bump (`CLAIM`). When the commit fails on a conflict, it rolls back, waits, and runs
    them again on the newest snapshot, at most RETRIES more times; the statements then see the
    other writer's committed rows (an UPDATE closes the versions that are current now).
    A statement outside a transaction is retried alone. Anything else passes through.
    """

    def __init__(
        self, con: duckdb.DuckDBPyConnection, *, setup: Sequence[str] = (), retries: int = RETRIES, sleep: Callable[[float], None] = time.sleep
    ):
        self._con = con
        self._setup = tuple(setup)  # what a cursor runs before use (the session macros)
        self._journal: list[tuple[str, tuple[Any, ...]]] | None = None
        self.retries = retries
        self._sleep = sleep
        self.replays = 0  # transactions replayed after a conflict (observable in tests)

    def begin(self) -> LakeConnection:
        self._con.begin()
        self._journal = []
        self.execute(CLAIM)
        return self

    def execute(self, query: str, parameters: Any = None) -> Any:
        if self._journal is None:
            return retry_conflicts(lambda: self._con.execute(query, parameters), retries=self.retries, sleep=self._sleep)
        self._journal.append(("execute", (query, parameters)))
        return self._con.execute(query, parameters)

    def executemany(self, query: str, parameters: Any = None) -> Any:
        if self._journal is None:
            return retry_conflicts(lambda: self._con.executemany(query, parameters), retries=self.retries, sleep=self._sleep)
        self._journal.append(("executemany", (query, parameters)))
        return self._con.executemany(query, parameters)

    def register(self, view_name: str, python_object: Any) -> LakeConnection:
        if self._journal is not None:
            self._journal.append(("register", (view_name, python_object)))
        self._con.register(view_name, python_object)
        return self

    def unregister(self, view_name: str) -> LakeConnection:
        if self._journal is not None:
            self._journal.append(("unregister", (view_name,)))
        self._con.unregister(view_name)
        return self

    def commit(self) -> LakeConnection:
        journal, self._journal = self._journal or [], None
        for attempt in range(self.retries + 1):
            try:
                self._con.commit()
                return self
            except duckdb.Error as exc:
                self._abandon()
                if not is_conflict(exc) or attempt == self.retries:
                    raise
                log.info("lake commit lost a conflict, replaying (%d of %d): %s", attempt + 1, self.retries, str(exc).splitlines()[-1])
            self._sleep(backoff_s(attempt))
            self.replays += 1
            self._replay(journal)
        raise AssertionError("unreachable")

    def _replay(self, journal: list[tuple[str, tuple[Any, ...]]]) -> None:
        self._con.begin()
        try:
            for method, args in journal:
                getattr(self._con, method)(*args)
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """Roll back whatever is still open (a failed commit may or may not have ended it)."""
        try:
            self._con.rollback()
        except duckdb.Error:
            pass

    def rollback(self) -> LakeConnection:
        self._journal = None
        self._con.rollback()
        return self

    def cursor(self) -> LakeConnection:
        """A session of its own on the same attached lake (for another thread, or another write)."""
        cursor = self._con.cursor()
        for statement in (*SESSION, *self._setup):
            cursor.execute(statement)
        return LakeConnection(cursor, setup=self._setup, retries=self.retries, sleep=self._sleep)

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> LakeConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)
