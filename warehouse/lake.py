"""The team warehouse: a DuckLake catalog instead of the DuckDB file.

DuckLake keeps the catalog's metadata in a database several machines reach (PostgreSQL) and
the rows as Parquet files under a data path, so refreshes of different sources on different
machines commit at once while readers query. gpucat runs the same migrations, SQL files and
CLI on it; `warehouse.db.connect` hands a `ducklake:` URL here.

- Extensions come from the `duckdb-extension-ducklake` and `duckdb-extension-postgres` wheels
  (pinned with DuckDB in pyproject.toml) and load from their installed files, with DuckDB's
  automatic install and load off: nothing is downloaded at run time.
- DuckLake has no PRIMARY KEY, UNIQUE or CHECK constraints, so `lake_schema.portable_sql` drops them
  from the migrations and names what it dropped. The writers keep those keys unique by
  construction (run ids are fresh uuid4s; reference tables are replaced from frames whose keys
  pandera checked, and `db.load_reference` re-checks them before the commit; fetch tokens are
  MERGEd per source), and `lake_schema.violations` lists any row that breaks a dropped constraint.
- Commits are optimistic. DuckLake itself retries a commit that raced another one without
  touching the same data; a real conflict (both deleted or updated rows of one table, say)
  fails the commit. `LakeConnection` then replays the transaction's statements against the newest
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
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import util as importlib_util
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from gpucat.schemas.errors import GpucatError
from gpucat.schemas.settings import user_cache_dir

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
DATA_FILES_SQL = Path(__file__).parent / "sql" / "lake_data_files.sql"


def is_lake(target: object) -> bool:
    """A DuckLake URL (`ducklake:postgres:...`, or `ducklake:<file>` for a single machine)."""
    return isinstance(target, str) and target.startswith(PREFIX)


def describe(url: str) -> str:
    """The URL for messages: a password in the connection string is never shown."""
    url = _URI_PASSWORD.sub(r"\1***\3", url)
    return _KEY_PASSWORD.sub(r"\1***", url)


# A password in a libpq key/value string (`password=x`, `password = 'a b'`) or a URI (`//user:x@`).
_KEY_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_URI_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.IGNORECASE)


def split_password(url: str) -> tuple[str, str | None]:
    """The URL without its password, and the password (None when it has none).

    The password then reaches PostgreSQL through a DuckDB secret, which DuckDB never shows,
    instead of through the attached path, which `duckdb_databases()` and settings would.
    """
    match = _KEY_PASSWORD.search(url)
    if match:
        value = match.group(2)
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        return (url[: match.start()] + url[match.end():]).strip(), value
    match = _URI_PASSWORD.search(url)
    if match:
        from urllib.parse import unquote

        return url[: match.start(1)] + match.group(1)[:-1] + "@" + url[match.end():], unquote(match.group(2))
    return url, None


def data_path(value: str | None) -> str | None:
    """Where new Parquet files go: $GPUCAT_LAKE_DATA, a folder made absolute, or an object-store URL.

    Only a new lake needs it: the lake records its data path, and later opens read it from there.
    """
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
            raise GpucatError(f"the DuckLake warehouse needs the {wheel} package built for DuckDB {version}: install gpucat[team] "
                              "(pip install 'gpucat[team]', which pins DuckDB 1.5.5 and its extension wheels)")
        found[name] = path if stem == name else _named_link(path, name)
    return found


def _wheel_file(package: str, stem: str, version: str) -> Path | None:
    spec = importlib_util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "extensions" / f"v{version}" / f"{stem}.duckdb_extension"
    return path if path.is_file() else None


def _named_link(target: Path, name: str) -> Path:
    """`<name>.duckdb_extension` in a cache folder: a link to `target`, or a copy where links are
    not allowed (Windows without the privilege); made once, then reused."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    base = user_cache_dir() / "duckdb-extensions" / target.parent.name
    for folder in (base, Path(tempfile.gettempdir()) / f"gpucat-duckdb-extensions-{uid}" / target.parent.name):
        link = folder / f"{name}.duckdb_extension"
        try:
            if link.is_symlink() and Path(os.readlink(link)) == target:
                return link
            if link.is_file() and not link.is_symlink() and link.stat().st_size == target.stat().st_size:
                return link
            folder.mkdir(parents=True, exist_ok=True)
            staging = folder / f".{name}.{os.getpid()}.tmp"
            staging.unlink(missing_ok=True)
            try:
                staging.symlink_to(target)
            except OSError:
                shutil.copyfile(target, staging)
            os.replace(staging, link)  # atomic: a concurrent process sees the old file or the new one
            return link
        except OSError:
            continue
    raise GpucatError(f"cannot place {name}.duckdb_extension (from {target}) in {base} or the temp folder")


# --- opening ------------------------------------------------------------------------------


def attach(url: str, *, read_only: bool = False, lake_data: str | None = None) -> duckdb.DuckDBPyConnection:
    """A fresh in-memory DuckDB with the lake attached as `lake` and made the default catalog.

    The first ATTACH of a new lake creates DuckLake's own tables in PostgreSQL; writers that
    do so at the same moment collide there, and the losers attach again to find them made.
    """
    for attempt in range(RETRIES + 1):
        try:
            return _attach(url, read_only, lake_data)
        except _CreatedConcurrently:
            if attempt == RETRIES:
                raise GpucatError(f"cannot open the DuckLake warehouse {describe(url)}: other writers kept creating it") from None
        time.sleep(backoff_s(attempt))
    raise AssertionError("unreachable")


class _CreatedConcurrently(Exception):
    """Another process created the lake's metadata tables while this one tried to."""


def _attach(url: str, read_only: bool, lake_data: str | None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        files = extension_files()
        needed = ["ducklake"] + (["postgres_scanner"] if url[len(PREFIX):].startswith("postgres:") else []) + [n for n in OPTIONAL_EXTENSIONS if n in files]
        for name in needed:
            con.execute(f"LOAD '{_literal(str(files[name]))}'")
        url, password = split_password(url)
        if password is not None:
            # DuckLake's PostgreSQL connection falls back to the default postgres secret.
            con.execute(f"CREATE TEMPORARY SECRET (TYPE postgres, PASSWORD '{_literal(password)}')")
        options = []
        data = data_path(lake_data)
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
        # `gpucat sql` turns file access off (warehouse.sandbox); the lake's own files stay readable
        # (the sandbox refuses COPY and every other statement that writes a file).
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


def verify_data_files(con: duckdb.DuckDBPyConnection) -> None:
    """Raise when a data or delete file of the current snapshot is missing or not the size DuckLake
    recorded: a file changed outside DuckLake must be an error, never a price. (DuckLake records
    no checksum, so the size is what can be checked.) Files in an object store are not checked."""
    row = con.execute(f"SELECT value FROM __ducklake_metadata_{CATALOG}.ducklake_metadata WHERE key = 'data_path'").fetchone()
    data = row[0] if row and row[0] else ""
    if "://" in data:
        return
    files = con.execute(DATA_FILES_SQL.read_text(encoding="utf-8"), {"data_path": data}).fetchall()
    for path, recorded in files:
        if "://" in path:
            continue
        try:
            size = os.stat(path).st_size
        except OSError as exc:
            raise GpucatError(f"the lake's data file {path} is unreadable ({exc.strerror or exc}); DuckLake lists it in the current snapshot") from None
        if recorded is not None and size != recorded:
            raise GpucatError(
                f"the lake's data file {path} is {size:,} bytes but DuckLake recorded {recorded:,}: "
                "it was changed outside DuckLake; restore it from a backup before reading"
            )


def _literal(text: str) -> str:
    return text.replace("'", "''")


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
