"""Opening the DuckDB file: path resolution, lock waits, numbered migrations, macros, reference data.

DuckDB lets one process write a file or many processes read it, never both at once. So a
refresh opens the file only for each short load (`FileWriter`), and both sides wait a bounded
time for the other to let go before they give up with one clear line. A writer first takes
an advisory `<db>.writer` lock, which new readers wait on: a stream of readers cannot keep a
waiting writer out, and writers in different processes take turns.

A `ducklake:` URL instead of a file path opens the team warehouse (warehouse/lake.py): the same
migrations and SQL on a DuckLake catalog, where writers commit optimistically (a conflicting
transaction is replayed) and take no file lock (`LakeWriter`). Both are `Writer`s: `open()` a
connection for one burst of transactions; `db.writer(target)` picks the kind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import duckdb

from gpucat.schemas.errors import DatabaseBusy, DatabaseMissing, GpucatError
from gpucat.schemas.settings import Settings
from gpucat.warehouse import lake

if TYPE_CHECKING:
    import polars as pl

    from gpucat.warehouse import lake_schema, reference  # imported where needed: read commands on a file never do

HERE = Path(__file__).parent
MIGRATIONS = HERE / "migrations"
SQL = HERE / "sql"
# How long a reader waits for a load to finish, and a load for readers to close the file.
READ_WAIT_S = 10.0
WRITE_WAIT_S = 60.0
FIRST_BACKOFF_S = 0.02
MAX_BACKOFF_S = 0.5


def db_path(explicit: str | Path | None, settings: Settings) -> Path | str:
    """`--db`/`--warehouse` wins, then `GPUCAT_WAREHOUSE`, then `GPUCAT_DB`, then gpucat.duckdb in
    the user's data directory (`Settings.db_target`: the edge's settings, read once as it started)."""
    return as_target(settings.db_target(explicit))


def as_target(value: str | Path) -> Path | str:
    """A DuckLake URL (`ducklake:...`) stays a string; anything else is a DuckDB file's path."""
    return value if isinstance(value, str) and lake.is_lake(value) else Path(value)


def connect(
    path: str | Path, *, read_only: bool = False, wait_s: float | None = None, now: datetime | None = None, lake_data: str | None = None
) -> duckdb.DuckDBPyConnection:
    """Open (and for writers create and migrate) the warehouse at `path`. Readers need an existing file.

    `now` sets the session's clock (the variable gpucat_now that ages offers and sources);
    without it the clock is DuckDB's now().

    Held by another process, the file is retried with backoff for `wait_s` seconds (default
    READ_WAIT_S for readers, WRITE_WAIT_S for writers); readers also let a waiting writer go first.
    A DuckLake URL opens the lake instead (no locks to wait for: `_connect_lake`); `lake_data` is
    where a new lake keeps its files (`Settings.lake_data`).
    """
    target = as_target(path)
    con = _connect_lake(target, read_only, lake_data) if isinstance(target, str) else _connect_file(target, read_only, wait_s)
    if now is not None:
        con.execute("SET VARIABLE gpucat_now = CAST($now AS TIMESTAMPTZ)", {"now": now})
    return con


def _connect_file(target: Path, read_only: bool, wait_s: float | None) -> duckdb.DuckDBPyConnection:
    if str(target) != ":memory:" and read_only and not target.exists():
        raise DatabaseMissing(f"no database at {target}; run `gpucat refresh` first or pass --db")
    wait_s = (READ_WAIT_S if read_only else WRITE_WAIT_S) if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    if read_only:
        _wait_for_writer(target, deadline)
    elif str(target) != ":memory:":
        try:
            target.parent.mkdir(parents=True, exist_ok=True)  # the default lives in a data folder a first refresh makes
        except OSError as exc:
            raise GpucatError(f"cannot make the database's folder {target.parent}: {exc.strerror or exc}") from None
    con = _open(target, read_only, deadline, wait_s)
    con.execute("SET TimeZone = 'UTC'")
    try:
        refuse_newer(con, str(target))
    except GpucatError:
        con.close()
        raise
    if read_only:
        pending = pending_migrations(con)
        if pending:
            con.close()
            raise DatabaseMissing(f"{target} needs migrations {', '.join(pending)}; run `gpucat refresh` once to upgrade it")
    else:
        migrate(con)
        run_script(con, SQL / "macros.sql")
    return con


def _connect_lake(url: str, read_only: bool, lake_data: str | None) -> duckdb.DuckDBPyConnection:
    """The lake attached (and for a writer migrated), wrapped to replay a conflicting transaction.

    Macros live in the session on a lake, so readers define them too, and so does every cursor.
    """
    from gpucat.warehouse import lake_schema

    con = lake.attach(url, read_only=read_only, lake_data=lake_data)
    try:
        refuse_newer(con, f"the DuckLake warehouse {lake.describe(url)}")
        if read_only:
            pending = pending_migrations(con)
            if pending:
                hint = "is empty" if len(pending) == len(migration_files()) else f"needs migrations {', '.join(pending)}"
                raise DatabaseMissing(f"the DuckLake warehouse {lake.describe(url)} {hint}; run `gpucat refresh` once")
            lake.verify_data_files(con)
        else:
            _migrate_lake(con)
        macros = [lake_schema.macro_statement(s) for s in split_statements((SQL / "macros.sql").read_text(encoding="utf-8"))]
        for statement in macros:
            con.execute(statement)
        return lake.LakeConnection(con, setup=macros)  # type: ignore[return-value]  # quacks like a connection
    except BaseException:
        con.close()
        raise


def _migrate_lake(con: duckdb.DuckDBPyConnection) -> None:
    """Migrate, starting over when a writer on another machine applied the same migration first.

    Not by replaying the transaction (`lake.LakeConnection`): the list of pending migrations
    must be read again.
    """
    from gpucat.warehouse import lake_schema

    # The retry budget counts races lost without progress: with several writers migrating a new
    # lake at once, each commit by one makes the others start over, and a long list of migrations
    # must not exhaust the budget while the lake is in fact moving forward.
    attempt = 0
    left = len(migration_files()) + 1
    while True:
        try:
            migrate(con, rewrite=lake_schema.lake_statement)
            with transaction(con):
                for statement in lake.LEDGER_SQL:
                    con.execute(statement)
            return
        except duckdb.Error as exc:
            raced = lake.is_conflict(exc) or "already exists" in str(exc)
            if not raced or attempt == lake.RETRIES:
                raise
        now_left = len(pending_migrations(con))
        attempt = 0 if now_left < left else attempt + 1
        left = now_left
        time.sleep(lake.backoff_s(attempt))


def lake_constraints() -> list[lake_schema.Dropped]:
    """The keys and checks the migrations declare that a lake cannot (checked by `lake_schema.violations`)."""
    from gpucat.warehouse import lake_schema

    return lake_schema.dropped_constraints([s for f in migration_files() for s in split_statements(f.read_text(encoding="utf-8"))])


def _open(target: Path, read_only: bool, deadline: float, wait_s: float) -> duckdb.DuckDBPyConnection:
    backoff = FIRST_BACKOFF_S
    while True:
        try:
            return duckdb.connect(str(target), read_only=read_only)
        except duckdb.IOException as exc:
            first_line = str(exc).splitlines()[0]
            if not is_lock_conflict(exc):
                raise GpucatError(f"cannot open {target}: {first_line}") from None
            if time.monotonic() + backoff > deadline:
                holder = "a refresh is writing it" if read_only else "other processes are reading or writing it"
                raise DatabaseBusy(f"{target} is busy: {holder}; gave up after {wait_s:g} s, try again") from None
        time.sleep(backoff)
        backoff = min(backoff * 2, MAX_BACKOFF_S)


def is_lock_conflict(exc: BaseException) -> bool:
    """DuckDB's "Could not set lock on file ... Conflicting lock is held" (another process has it)."""
    return "lock" in str(exc).lower() and "conflicting" in str(exc).lower()


def writer_lock_path(target: Path) -> Path:
    return target.with_name(target.name + ".writer")


def _wait_for_writer(target: Path, deadline: float) -> None:
    """Let a writer that holds or waits for the file go first (bounded; no lock file, no wait)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the DuckDB lock retry alone
        return
    try:
        fd = os.open(writer_lock_path(target), os.O_RDONLY)
    except OSError:
        return
    backoff = FIRST_BACKOFF_S
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)  # readers only pass the gate; they never hold it
                return
            except BlockingIOError:
                if time.monotonic() + backoff > deadline:
                    return  # the DuckDB open below reports the busy file in one line
                time.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
    finally:
        os.close(fd)


@contextmanager
def _writer_gate(target: Path) -> Iterator[None]:
    """Hold `<db>.writer` exclusively while opening and writing (serializes writers, gates readers)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(writer_lock_path(target), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # e.g. a read-only folder: the open below fails with its own clear line
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class Writer(Protocol):
    """Where a refresh writes: `open()` gives a connection for one burst of transactions, one
    burst at a time. Fetching and parsing never hold it. `writer(target)` picks the kind."""

    def open(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...

    def close(self) -> None: ...


class FileWriter:
    """A DuckDB file, opened read-write only for each burst, so readers are locked out only while
    sources load. Writers take turns: processes on the `<db>.writer` file lock, threads of this one
    on `_turn`. It travels to task-runner workers (Dask) as its path."""

    def __init__(self, path: Path, *, wait_s: float | None = None, template: Path | None = None):
        self.path, self.wait_s, self.template = path, wait_s, template
        self._turn = threading.Lock()
        self._keep_template = False  # this writer made a new file while no template existed

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "wait_s": self.wait_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], wait_s=state["wait_s"])  # type: ignore[misc]

    @contextmanager
    def open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._turn, _writer_gate(self.path):
            if self.template is not None and not self.path.exists() and not Path(f"{self.path}.wal").exists():
                self._keep_template = not _copy_file(self.template, self.path)
            con = connect(self.path, wait_s=self.wait_s)
            try:
                yield con
            finally:
                con.close()

    def reference_loaded(self, con: duckdb.DuckDBPyConnection) -> None:
        """The new file now holds its schema and reference data (`pipeline.start_refresh`), and
        nothing else yet: kept as the template the next new file starts from, when there is none."""
        if self._keep_template and self.template is not None:
            self._keep_template = False
            con.execute("CHECKPOINT")  # the file alone is the whole database from here until the next commit
            _copy_file(self.path, self.template)

    def close(self) -> None:
        pass  # nothing is held between bursts


class ConnectionWriter:
    """An open connection every burst shares (an in-memory database, a caller's connection, an
    attached lake): each burst gets a cursor of it (a connection is not shared across threads; a
    cursor is), one thread at a time. It cannot move to another process."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, owned: bool = False):
        self.con, self._owned = con, owned
        self._turn = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("a writer on an open connection cannot move to another process; give it a file path")

    @contextmanager
    def open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._turn, self.con.cursor() as cursor:
            yield cursor

    def close(self) -> None:
        if self._owned:
            self.con.close()


class LakeWriter:
    """A DuckLake catalog: attached (and migrated) on the first burst and kept, since a lake locks
    no one out; each burst gets a cursor. It travels to workers as its URL: each process attaches
    the lake itself. `lake_data`: where a new lake keeps its files (`Settings.lake_data`)."""

    def __init__(self, url: str, *, lake_data: str | None = None):
        self.url, self.lake_data = url, lake_data
        self._attached: ConnectionWriter | None = None
        self._attaching = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"url": self.url, "lake_data": self.lake_data}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["url"], lake_data=state["lake_data"])  # type: ignore[misc]

    @contextmanager
    def open(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self._attaching:
            if self._attached is None:
                self._attached = ConnectionWriter(connect(self.url, lake_data=self.lake_data), owned=True)
        with self._attached.open() as cursor:
            yield cursor

    def close(self) -> None:
        if self._attached is not None:
            self._attached.close()
            self._attached = None


def writer(target: str | Path, *, lake_data: str | None = None, wait_s: float | None = None, templates: Path | None = None) -> Writer:
    """The writer of a warehouse: a lake for a `ducklake:` URL, a connection kept open for
    `:memory:` (nothing to reopen), else the DuckDB file. `templates`: a cache folder where a new
    file's migrated schema and reference data are kept, and the next new file starts from them
    (`template_path`)."""
    where = as_target(target)
    if isinstance(where, str):
        return LakeWriter(where, lake_data=lake_data)
    if str(where) == ":memory:":
        return ConnectionWriter(connect(where), owned=True)
    return FileWriter(where, wait_s=wait_s, template=template_path(templates) if templates is not None else None)


def template_path(folder: Path) -> Path:
    """Where a new file's starting point is kept: named by this DuckDB's version and the migrations
    (what shapes the file). Its reference tables check themselves: each carries the digest it was
    loaded from, and `load_changed_reference` reloads those whose inputs changed since."""
    h = hashlib.sha256(f"duckdb {duckdb.__version__}".encode())
    for path in migration_files():
        h.update(b"\0" + path.name.encode() + b"\0" + path.read_bytes())
    return folder / f"new-warehouse-{h.hexdigest()[:32]}.duckdb"


def _copy_file(source: Path, target: Path) -> bool:
    """`source` copied to `target` whole or not at all (a reader never opens half a file); False
    when it cannot be (no template yet, an unwritable cache): the caller goes on without it."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=target.name, suffix=".part", dir=target.parent)
        os.close(fd)
        try:
            shutil.copyfile(source, partial)
            os.replace(partial, target)
        finally:
            Path(partial).unlink(missing_ok=True)
    except OSError:
        return False
    return True


def as_writer(warehouse: Writer | duckdb.DuckDBPyConnection | str | Path) -> Writer:
    """What a refresh was handed, as a writer: an open connection is shared, a target gets `writer`."""
    if isinstance(warehouse, (duckdb.DuckDBPyConnection, lake.LakeConnection)):
        return ConnectionWriter(warehouse)  # type: ignore[arg-type]  # a LakeConnection quacks like one
    if isinstance(warehouse, (str, Path)):
        return writer(warehouse)
    return warehouse


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS.glob("[0-9][0-9][0-9]_*.sql"))


def _applied(con: duckdb.DuckDBPyConnection) -> set[str]:
    # duckdb_tables() rather than information_schema: a cold read of the latter costs a read command ~0.1 s.
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_migrations'").fetchone()
    if not exists or not exists[0]:
        return set()
    return {row[0] for row in con.execute("SELECT version FROM schema_migrations").fetchall()}


def refuse_newer(con: duckdb.DuckDBPyConnection, label: str) -> None:
    """A warehouse a newer gpucat migrated is refused by every command: this code does not know its tables."""
    unknown = sorted(_applied(con) - {f.stem for f in migration_files()})
    if unknown:
        latest = migration_files()[-1].stem if migration_files() else "none"
        raise GpucatError(
            f"{label} was written by a newer gpucat (migration {', '.join(unknown)}; this gpucat knows up to {latest}); upgrade gpucat to use it"
        )


def pending_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    applied = _applied(con)
    return [f.stem for f in migration_files() if f.stem not in applied]


def migrate(con: duckdb.DuckDBPyConnection, *, rewrite: Callable[[str], str] | None = None) -> list[str]:
    """Apply numbered migrations not yet applied, each in its own transaction.

    `rewrite` adapts each statement to the engine (a lake drops the constraints it lacks).
    """
    create = "CREATE TABLE IF NOT EXISTS schema_migrations (version VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
    con.execute(rewrite(create) if rewrite else create)
    if rewrite is None and not _applied(con):
        # A new file has one writer and nothing to keep: every migration in one transaction (one
        # commit instead of one per migration, a tenth of a new warehouse's first refresh).
        pending = pending_migrations(con)
        with transaction(con):
            for version in pending:
                run_script(con, MIGRATIONS / f"{version}.sql")
                con.execute("INSERT INTO schema_migrations VALUES ($v, now())", {"v": version})
        return pending
    done = []
    for version in pending_migrations(con):
        with transaction(con):
            # On a lake, which has no key to refuse a second row for a version, several writers
            # may migrate at once (a file has one writer at a time: this costs it nothing). Each
            # touches the ledger, so one that commits while another is mid-migration makes the
            # other conflict and start over; one that committed earlier is seen here, and skipped.
            con.execute("UPDATE schema_migrations SET applied_at = applied_at")
            if version in _applied(con):
                continue
            run_script(con, MIGRATIONS / f"{version}.sql", rewrite=rewrite)
            con.execute("INSERT INTO schema_migrations VALUES ($v, now())", {"v": version})
        done.append(version)
    return done


def run_script(con: duckdb.DuckDBPyConnection, path: Path, *, rewrite: Callable[[str], str] | None = None) -> None:
    for statement in split_statements(path.read_text(encoding="utf-8")):
        con.execute(rewrite(statement) if rewrite else statement)


def split_statements(sql: str) -> list[str]:
    """Split a script on semicolons that end a line (our .sql files keep one statement per block)."""
    without_comments = re.sub(r"--[^\n]*", "", sql)
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", without_comments) if s.strip()]


def query_sql(name: str) -> str:
    """A named query from warehouse/sql/<name>.sql."""
    return (SQL / f"{name}.sql").read_text(encoding="utf-8")


# Rows per row group of a staged frame's Parquet file: one row group of a 100k-offer batch cost
# 40 MB to encode, one of 10k rows 4 MB.
STAGE_ROWS = 10_000


@contextmanager
def staged(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> Iterator[None]:
    """`frame` readable as the table `name` by the statements run inside.

    On a file it goes through a Parquet file into a temporary table: DuckDB reads Parquet
    itself, so a load converts no frame to Arrow and never imports pyarrow (a quarter of a
    second, a fifth of a whole refresh), and a temporary table costs less than a registered
    frame. A lake replays a transaction that lost a conflict, the frames it read included
    (`lake.LakeConnection`), so there the frame is registered and kept by the replay.
    `name` comes from code, never from user input.
    """
    if isinstance(con, lake.LakeConnection):
        con.register(name, frame)
        try:
            yield
        finally:
            con.unregister(name)
        return
    with parquet_file(frame, name) as path:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM read_parquet($path)", {"path": path})
        try:
            yield
        finally:
            try:
                con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")
            except duckdb.Error:  # an aborted transaction: its rollback drops the table with the rest
                pass


@contextmanager
def parquet_file(frame: pl.DataFrame, name: str = "frame") -> Iterator[str]:
    """`frame` as a Parquet file for the duration: its path, for `read_parquet($path)`. A
    statement that reads a frame once reads it so (no temporary table to make and drop); one
    read by several statements is `staged`."""
    # A file of its own, removed after: a temporary folder per frame cost a refresh's 50 frames
    # a fifth of a second to remove again.
    fd, path = tempfile.mkstemp(prefix=f"gpucat-stage-{name}-", suffix=".parquet")
    try:
        os.close(fd)
        # Row groups of STAGE_ROWS: polars encodes a whole row group in memory before writing it.
        frame.write_parquet(path, compression="uncompressed", statistics=False, row_group_size=STAGE_ROWS)
        yield path
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    con.begin()
    try:
        yield
    except BaseException:
        con.rollback()
        raise
    con.commit()


def load_changed_reference(con: duckdb.DuckDBPyConnection, tables: Mapping[str, reference.Reference]) -> dict[str, int]:
    """`load_reference` of the tables whose digest differs from the one they were last loaded
    from (every table of a new warehouse); the others are neither built nor validated.
    The digest also covers the newest migration, which may have reshaped a table."""
    stored = {table: (digest, checksum) for table, digest, checksum in con.execute(query_sql("reference_digests")).fetchall()}
    schema = migration_files()[-1].stem if migration_files() else ""
    digests = {table: f"{ref.digest}/{schema}" for table, ref in tables.items()}
    checksums = reference_checksums(con, [table for table in tables if table in stored])
    changed = [table for table in tables if stored.get(table) != (digests[table], checksums.get(table))]
    if not changed:
        return {}
    frames = {table: tables[table].frame() for table in changed}  # validated before the transaction opens
    return load_reference(con, frames, digests={table: digests[table] for table in changed})


def reference_checksums(con: duckdb.DuckDBPyConnection, tables: list[str]) -> dict[str, str]:
    """Table -> a checksum of its rows (count and summed row hashes), in one query."""
    if not tables:
        return {}
    query = " UNION ALL ".join(query_sql("reference_checksum").format(table=table).replace("$table_name", f"$t{n}") for n, table in enumerate(tables))
    return dict(con.execute(query, {f"t{n}": table for n, table in enumerate(tables)}).fetchall())


def load_reference(con: duckdb.DuckDBPyConnection, frames: Mapping[str, Any], *, digests: Mapping[str, str] | None = None) -> dict[str, int]:
    """Replace reference tables with validated frames (table name -> polars frame), in one transaction.

    Which tables and files these are is the caller's list (`gpucat.pipeline.REFERENCE_TABLES`);
    table names come from that list, never from user input. `digests` records what each table
    was loaded from; a table loaded without one is reloaded from its file by the next refresh.
    """
    digests = digests or {}
    with transaction(con):
        for table, frame in frames.items():
            con.execute(f"DELETE FROM {table}")
            if isinstance(con, lake.LakeConnection):
                with staged(con, "reference_frame", frame):
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM reference_frame")
            else:
                with parquet_file(frame, "reference_frame") as path:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM read_parquet($path)", {"path": path})
            if table not in digests:
                con.execute(query_sql("forget_reference_digest"), {"table_name": table})
        for table, checksum in reference_checksums(con, [t for t in frames if t in digests]).items():
            con.execute(query_sql("save_reference_digests"), {"table_name": table, "digest": digests[table], "rows_checksum": checksum})
        if isinstance(con, lake.LakeConnection):  # no PRIMARY KEY there: check the keys before the commit
            from gpucat.warehouse import lake_schema

            broken = lake_schema.violations(con, lake_constraints(), tables=set(frames))
            if broken:
                raise GpucatError("reference data breaks its keys: " + "; ".join(broken))
    return {table: frame.height for table, frame in frames.items()}
