"""The DuckLake warehouse without a server: a lake whose metadata is a local DuckDB file.

The same migrations, loads and reads run on it as on the DuckDB file; the PostgreSQL-backed,
multi-process test is tests/warehouse/test_lake_postgres.py.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb
import pytest

from gpucat import pipeline
from gpucat.schemas.errors import DatabaseMissing, GpucatError
from gpucat.schemas.settings import Settings
from gpucat.scrapers import get_source
from gpucat.warehouse import db, lake, lake_schema
from tests.conftest import FIXTURES

SOURCES = ["aws-spot", "ecb-rates", "runpod-graphql"]


@pytest.fixture
def lake_url(tmp_path: Path) -> str:
    """A new lake (DuckLake's own tables, no gpucat migrations yet) that keeps its files in tmp_path/data."""
    url = f"ducklake:{tmp_path / 'meta.ducklake'}"
    lake.attach(url, lake_data=str(tmp_path / "data")).close()
    return url


# --- the migration transform ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "portable", "dropped"),
    [
        (
            "CREATE TABLE t (id VARCHAR PRIMARY KEY, n INTEGER NOT NULL)",
            'CREATE TABLE t (\n    "id" VARCHAR NOT NULL,\n    "n" INTEGER NOT NULL\n)',
            [lake_schema.Dropped("t", "key", "id")],
        ),
        (
            "CREATE TABLE t (\n    a VARCHAR NOT NULL,\n    b INTEGER,\n    PRIMARY KEY (a, b)\n)",
            'CREATE TABLE t (\n    "a" VARCHAR NOT NULL,\n    "b" INTEGER NOT NULL\n)',
            [lake_schema.Dropped("t", "key", "a, b")],
        ),
        (
            "CREATE TABLE t (s VARCHAR NOT NULL CHECK (s IN ('ok', 'failed')), n INTEGER DEFAULT 0, made TIMESTAMPTZ DEFAULT now())",
            'CREATE TABLE t (\n    "s" VARCHAR NOT NULL,\n    "n" INTEGER DEFAULT 0,\n    "made" TIMESTAMP WITH TIME ZONE DEFAULT now()\n)',
            [lake_schema.Dropped("t", "check", "(s IN ('ok', 'failed'))")],
        ),
        (
            "CREATE TABLE IF NOT EXISTS t (v VARCHAR UNIQUE, w VARCHAR, CONSTRAINT c CHECK (length(w) > 0))",
            'CREATE TABLE IF NOT EXISTS t (\n    "v" VARCHAR,\n    "w" VARCHAR\n)',
            [lake_schema.Dropped("t", "key", "v"), lake_schema.Dropped("t", "check", "(length(w) > 0)")],
        ),
        (  # a keyword inside a string or a default is data, not a constraint
            "CREATE TABLE t (note VARCHAR DEFAULT 'UNIQUE, PRIMARY KEY (x)', k DECIMAL(10, 2))",
            'CREATE TABLE t (\n    "note" VARCHAR DEFAULT \'UNIQUE, PRIMARY KEY (x)\', \n    "k" DECIMAL(10,2)\n)'.replace(", \n", ",\n"),
            [],
        ),
        ("ALTER TABLE t ADD COLUMN x INTEGER", "ALTER TABLE t ADD COLUMN x INTEGER", []),
        ("CREATE VIEW v AS SELECT 1 AS unique_id", "CREATE VIEW v AS SELECT 1 AS unique_id", []),
    ],
)
def test_portable_sql_drops_only_the_constraints(statement: str, portable: str, dropped: list[lake_schema.Dropped]) -> None:
    assert lake_schema.portable_sql(statement) == (portable, dropped)


def _tables(con, names: set[str]) -> dict[str, list[tuple]]:
    """Each table's columns as the catalog holds them: name, type, default, nullable, in order.

    A lake lists "no default" as the default NULL, and keeps a literal default as quoted text
    ('0' for 0, cast to the column's type on use): both are read as the file writes them."""
    rows = con.execute(
        "SELECT table_name, column_name, data_type, column_default, is_nullable FROM duckdb_columns()"
        " WHERE database_name = current_database() ORDER BY table_name, column_index"
    ).fetchall()
    tables: dict[str, list[tuple]] = {}
    for table, *column in rows:
        if table in names:
            name, data_type, default, nullable = column
            tables.setdefault(table, []).append((name, data_type, _default(default), nullable))
    return tables


def _default(text: str | None) -> str | None:
    if text is None or text == "NULL":
        return None
    quoted = len(text) > 1 and text[0] == text[-1] == "'" and "'" not in text[1:-1]
    return text[1:-1] if quoted else text


def test_every_migrations_tables_on_a_real_lake_are_the_files_less_their_constraints(tmp_path: Path) -> None:
    """The transform's contract, on every CREATE TABLE of every migration: on a DuckLake, the
    rewritten statement makes the same columns, types, defaults and NOT NULLs as the original
    on a DuckDB file, and the constraints it reports dropped are exactly those the file holds."""
    statements = [s for f in db.migration_files() for s in db.split_statements(f.read_text(encoding="utf-8"))]
    creates = [s for s in statements if s.lstrip().upper().startswith("CREATE TABLE")]
    assert len(creates) >= 20  # every migration's tables, not an empty list
    for n, statement in enumerate(creates):
        file = duckdb.connect(":memory:")
        file.execute(statement)
        [table] = [name for (name,) in file.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        held = file.execute(
            "SELECT constraint_type, constraint_column_names, expression FROM duckdb_constraints()"
            " WHERE constraint_type <> 'NOT NULL' ORDER BY constraint_index"
        ).fetchall()
        portable, dropped = lake_schema.portable_sql(statement)
        on_lake = lake.attach(f"ducklake:{tmp_path / f'{n}.ducklake'}", lake_data=str(tmp_path / f"data{n}"))
        try:
            on_lake.execute(portable)
            assert _tables(on_lake, {table}) == _tables(file, {table}), statement
        finally:
            on_lake.close()
            file.close()
        assert [(d.table, d.kind, d.text) for d in dropped] == [
            (table, "check" if kind == "CHECK" else "key", " ".join(expression.split()) if kind == "CHECK" else ", ".join(columns))
            for kind, columns, expression in held
        ], statement


def test_the_contract_check_sees_a_lost_not_null(tmp_path: Path) -> None:
    """The check above can fail: a rewrite that loses a NOT NULL or changes a type differs from the file."""
    file = duckdb.connect(":memory:")
    file.execute("CREATE TABLE t (id VARCHAR PRIMARY KEY, n INTEGER NOT NULL)")
    on_lake = lake.attach(f"ducklake:{tmp_path / 'x.ducklake'}", lake_data=str(tmp_path / "data"))
    on_lake.execute("CREATE TABLE t (id VARCHAR, n BIGINT NOT NULL)")
    assert _tables(on_lake, {"t"}) != _tables(file, {"t"})
    on_lake.close()
    file.close()


def test_the_lake_lacks_exactly_these_constraints() -> None:
    """Kept in step with the migrations: a new key or check must say here what enforces it on a lake."""
    assert [(d.table, d.kind, d.text) for d in db.lake_constraints()] == [
        ("gpu_models", "key", "gpu_model"),  # reference: pandera key check, re-checked before commit
        ("model_archs", "key", "name"),  # reference
        ("providers", "key", "provider"),  # reference
        ("quarantines", "key", "run_id"),  # a run's uuid4
        ("reviewed_egress_terms", "key", "provider, scope, tier"),  # reference
        ("reviewed_storage_terms", "key", "provider, kind, product"),  # reference
        ("scrape_runs", "key", "run_id"),  # uuid4 per run
        ("scrape_runs", "check", "(status IN ('ok', 'failed', 'skipped', 'unchanged', 'quarantined', 'running', 'interrupted'))"),  # load.py's and runs.py's statuses
        ("source_schedules", "key", "source"),  # reference (the schedules file)
        ("source_validators", "key", "source"),  # MERGE per source
    ]


def test_macros_become_session_macros() -> None:
    assert lake_schema.macro_statement("CREATE OR REPLACE MACRO f(x) AS x + 1") == "CREATE OR REPLACE TEMP MACRO f(x) AS x + 1"


# --- opening a lake -------------------------------------------------------------------------


def test_extensions_load_from_the_installed_wheels_with_downloads_off(lake_url: str) -> None:
    files = lake.extension_files()
    assert set(files) == {"ducklake", "postgres_scanner"}
    assert all(path.is_file() and path.name == f"{name}.duckdb_extension" for name, path in files.items())
    con = db.connect(lake_url)
    settings = dict(con.execute(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('autoinstall_known_extensions', 'autoload_known_extensions')"
    ).fetchall())
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    con.close()


def test_the_postgres_extension_gets_its_real_name_by_link_or_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel_file = tmp_path / "wheel" / "v1.5.5" / "postgres.duckdb_extension"
    wheel_file.parent.mkdir(parents=True)
    wheel_file.write_bytes(b"extension bytes")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    linked = lake._named_link(wheel_file, "postgres_scanner")
    assert linked.name == "postgres_scanner.duckdb_extension" and linked.is_symlink() and linked.read_bytes() == b"extension bytes"
    assert lake._named_link(wheel_file, "postgres_scanner") == linked  # reused
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "no-links"))

    def refuse(self, target):  # noqa: ANN001 - Windows without the symlink privilege
        raise OSError("symbolic links are not allowed")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    copied = lake._named_link(wheel_file, "postgres_scanner")
    assert not copied.is_symlink() and copied.read_bytes() == b"extension bytes"


def test_target_resolution_prefers_the_warehouse() -> None:
    env = {"GPUCAT_DB": "file.duckdb"}
    assert db.db_path(None, Settings.from_env(env)) == Path("file.duckdb")
    env[lake.WAREHOUSE_ENV] = "ducklake:postgres:dbname=gpucat host=127.0.0.1"
    assert db.db_path(None, Settings.from_env(env)) == "ducklake:postgres:dbname=gpucat host=127.0.0.1"
    assert db.db_path("mine.duckdb", Settings.from_env(env)) == Path("mine.duckdb")  # an explicit --db wins


def test_the_cli_hands_a_lake_url_through_unchanged(tmp_path: Path) -> None:
    """--warehouse (and --db) keep a ducklake: URL a string: a Path would fold `//` and miss the lake."""
    from typer.testing import CliRunner

    from gpucat.cli import app

    missing = f"ducklake:{tmp_path}//nothing.ducklake"
    for flag in ("--warehouse", "--db"):
        result = CliRunner().invoke(app, ["offers", flag, missing])
        assert result.exit_code == 1
        assert "cannot open the DuckLake warehouse ducklake:" in result.stderr and "//nothing.ducklake" in result.stderr


def test_a_password_never_reaches_a_message() -> None:
    assert lake.describe("ducklake:postgres:dbname=g password=s3cret host=h") == "ducklake:postgres:dbname=g password=*** host=h"


def test_reading_a_lake_nobody_created_fails_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(GpucatError, match="cannot open the DuckLake warehouse"):
        db.connect(f"ducklake:{tmp_path / 'nothing.ducklake'}", read_only=True)


def test_migrations_make_the_same_schema_as_the_file(lake_url: str, tmp_path: Path) -> None:
    def schema(con) -> list[tuple]:
        return con.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_catalog = current_database() AND table_name <> $ledger ORDER BY table_name, ordinal_position",
            {"ledger": lake.LEDGER},
        ).fetchall()

    with db.connect(tmp_path / "file.duckdb") as file:
        expected = schema(file)
    con = db.connect(lake_url)
    assert schema(con) == expected
    assert db.pending_migrations(con) == []
    con.close()
    con = db.connect(lake_url)  # a second open applies nothing
    assert [v for (v,) in con.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()] == [f.stem for f in db.migration_files()]
    con.close()


def test_a_migration_another_writer_applied_meanwhile_is_skipped(lake_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's list of pending migrations may be stale by the time it applies one: it checks again inside."""
    db.connect(lake_url).close()
    raw = lake.attach(lake_url)
    stale = "006_scrape_runs_rows_skipped"  # idempotent (ADD COLUMN IF NOT EXISTS): nothing else would stop it
    monkeypatch.setattr(db, "pending_migrations", lambda con: [stale])
    assert db.migrate(raw, rewrite=lake_schema.lake_statement) == []
    assert raw.execute("SELECT count(*) FROM schema_migrations WHERE version = $v", {"v": stale}).fetchone() == (1,)
    raw.close()


def test_a_reader_of_a_lake_that_needs_migrations_is_told(lake_url: str) -> None:
    con = db.connect(lake_url)
    con.execute("DELETE FROM schema_migrations WHERE version = $v", {"v": db.migration_files()[-1].stem})
    con.close()
    with pytest.raises(DatabaseMissing, match="needs migrations"):
        db.connect(lake_url, read_only=True)


def refresh(target, names: list[str]) -> list:
    with tempfile.TemporaryDirectory() as work:
        options = pipeline.FetchOptions(workdir=Path(work), replay_dir=FIXTURES)
        return pipeline.refresh_sources(db.writer(target), [get_source(n) for n in names], options, prerequisites=False)


CURRENT = "SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers ORDER BY ALL"


def test_a_refresh_loads_the_lake_as_it_loads_the_file(lake_url: str, tmp_path: Path) -> None:
    file = tmp_path / "file.duckdb"
    assert [r.status for r in refresh(file, SOURCES)] == ["ok"] * len(SOURCES)
    assert [r.status for r in refresh(lake_url, SOURCES)] == ["ok"] * len(SOURCES)
    with db.connect(file, read_only=True) as con:
        expected = con.execute(CURRENT).fetchall()
    con = db.connect(lake_url, read_only=True)
    assert con.execute(CURRENT).fetchall() == expected
    assert len(expected) > 0
    # macros work on a lake session too
    assert con.execute("SELECT count(*) FROM fit_offers(10, 1)").fetchone()[0] > 0
    assert lake_schema.violations(con, db.lake_constraints()) == []
    con.close()


def test_reads_on_a_lake_work_as_on_the_file(lake_url: str, tmp_path: Path) -> None:
    """A cursor is a session of its own (the lake is its default, the macros are there), and the
    `gpucat sql` sandbox reads the lake's files while every other file stays shut."""
    from gpucat.catalog import run_sql
    from gpucat.schemas.errors import QueryError

    refresh(lake_url, SOURCES)
    with db.connect(lake_url, read_only=True) as con, con.cursor() as cursor:
        assert cursor.execute("SELECT count(*) FROM fit_offers(10, 1)").fetchone() == con.execute("SELECT count(*) FROM fit_offers(10, 1)").fetchone()
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    with db.connect(lake_url, read_only=True) as con:
        assert run_sql(con, "SELECT count(*) > 0 FROM offers").rows == [(True,)]
    # read-only: the table-function allow-list refuses the reader before DuckDB runs it
    with db.connect(lake_url, read_only=True) as con, pytest.raises(QueryError, match="table function `read_csv` is not available in a read-only"):
        run_sql(con, f"SELECT * FROM read_csv('{outside}')")
    # --write has no allow-list: the allowed paths (the lake's data folder only) shut the file
    with db.connect(lake_url) as con, pytest.raises(QueryError, match="disabled by configuration"):
        run_sql(con, f"SELECT * FROM read_csv('{outside}')", write=True)


def test_an_unchanged_replay_adds_no_versions_on_a_lake(lake_url: str) -> None:
    refresh(lake_url, SOURCES)
    count = "SELECT count(*) FROM offer_versions"
    with db.connect(lake_url, read_only=True) as con:
        before = con.execute(count).fetchone()[0]
    refresh(lake_url, SOURCES)
    with db.connect(lake_url, read_only=True) as con:
        assert con.execute(count).fetchone()[0] == before
        assert con.execute("SELECT count(*) FROM scrape_runs").fetchone()[0] == 2 * len(SOURCES)


def test_reference_rows_that_break_a_key_roll_back(lake_url: str) -> None:
    import polars as pl

    con = db.connect(lake_url)
    frame = pl.DataFrame({"source": ["a", "a"], "schedule_group": ["g", "g"], "cron": ["0 * * * *"] * 2, "stale_after_hours": [2.0, 2.0]})
    with pytest.raises(GpucatError, match=r"source_schedules: 1 duplicate \(source\)"):
        db.load_reference(con, {"source_schedules": frame})
    assert con.execute("SELECT count(*) FROM source_schedules").fetchone()[0] == 0
    con.close()


# --- conflicts ------------------------------------------------------------------------------


def test_a_conflicting_transaction_is_replayed_on_the_newest_snapshot(lake_url: str) -> None:
    """Two writers close the same current version: the loser replays and its UPDATE sees the winner's rows."""
    setup = db.connect(lake_url)
    setup.execute("INSERT INTO source_schedules VALUES ('a', 'g', '0 * * * *', 1), ('b', 'g', '0 * * * *', 1)")
    setup.close()
    base = lake.attach(lake_url)
    first, second = lake.LakeConnection(base.cursor()), lake.LakeConnection(base.cursor(), sleep=lambda s: None)
    for con in (first, second):
        con.execute(f"USE {lake.CATALOG}")
    first.begin()
    second.begin()
    first.execute("UPDATE source_schedules SET stale_after_hours = stale_after_hours + 1 WHERE source = 'a'")
    second.execute("UPDATE source_schedules SET stale_after_hours = stale_after_hours + 10 WHERE source = 'b'")
    first.commit()
    second.commit()  # deleted from the same table: DuckLake refuses it once, the replay commits
    assert (first.replays, second.replays) == (0, 1)
    assert base.execute("SELECT source, stale_after_hours FROM source_schedules ORDER BY source").fetchall() == [("a", 2.0), ("b", 11.0)]
    base.close()


def test_two_first_loads_of_one_key_cannot_both_commit(lake_url: str) -> None:
    """Appends never conflict in DuckLake; the ledger bump makes these two conflict, so the key stays unique."""
    db.connect(lake_url).close()
    base = lake.attach(lake_url)
    first, second = (lake.LakeConnection(base.cursor(), sleep=lambda s: None) for _ in range(2))
    for con in (first, second):
        con.execute(f"USE {lake.CATALOG}")
        con.begin()
        con.execute("DELETE FROM source_schedules")  # an empty table: deletes nothing, so conflicts on nothing
        con.execute("INSERT INTO source_schedules VALUES ('a', 'g', '0 * * * *', 1)")
    first.commit()
    second.commit()
    assert second.replays == 1
    assert base.execute("SELECT source FROM source_schedules").fetchall() == [("a",)]
    base.close()


class AlwaysLoses:
    """A connection whose every commit loses to another writer (the journal's replays are what it records)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def begin(self) -> None:
        self.calls.append("begin")

    def execute(self, query: str, parameters: object = None) -> None:
        self.calls.append(query)

    def register(self, name: str, frame: object) -> None:
        self.calls.append(f"register {name}")

    def unregister(self, name: str) -> None:
        self.calls.append(f"unregister {name}")

    def commit(self) -> None:
        self.calls.append("commit")
        raise duckdb.TransactionException("TransactionContext Error: Failed to commit: Transaction conflict - another transaction has deleted from it")

    def rollback(self) -> None:
        self.calls.append("rollback")


def test_a_conflict_that_outlives_the_retries_is_raised() -> None:
    fake, slept = AlwaysLoses(), []
    con = lake.LakeConnection(fake, retries=2, sleep=slept.append)  # type: ignore[arg-type]
    con.begin()
    con.register("staged", object())
    con.execute("DELETE FROM t")
    con.unregister("staged")
    with pytest.raises(duckdb.TransactionException, match="conflict"):
        con.commit()
    attempt = ["begin", lake.CLAIM, "register staged", "DELETE FROM t", "unregister staged", "commit", "rollback"]
    assert fake.calls == attempt * 3
    assert (con.replays, len(slept)) == (2, 2)
    assert all(0 <= s <= lake.MAX_BACKOFF_S for s in slept)


def test_retry_conflicts_passes_other_errors_at_once() -> None:
    calls = []

    def broken():
        calls.append(1)
        raise duckdb.CatalogException("Catalog Error: Table with name nope does not exist!")

    with pytest.raises(duckdb.CatalogException):
        lake.retry_conflicts(broken, sleep=lambda s: None)
    assert len(calls) == 1


def test_the_prefect_flow_refreshes_a_lake(lake_url: str) -> None:
    """What a worker runs: the flow, given the lake's URL as its db_path."""
    from gpucat.flows.refresh import refresh as refresh_flow

    state = refresh_flow(providers=SOURCES, replay_dir=str(FIXTURES), db_path=lake_url, return_state=True)
    assert state.is_completed(), state.message
    assert sorted(row["source"] for row in state.result()) == sorted(SOURCES)
    with db.connect(lake_url, read_only=True) as con:
        runs = con.execute("SELECT source, status, flow_run_id IS NOT NULL FROM scrape_runs ORDER BY source").fetchall()
    assert runs == [(name, "ok", True) for name in sorted(SOURCES)]


def test_a_lake_writer_travels_to_another_process_as_its_url(lake_url: str, tmp_path: Path) -> None:
    """Task runners (Dask) pickle the writer: a lake's attached connection stays behind, the URL goes."""
    import pickle

    writer = db.writer(lake_url, lake_data=str(tmp_path / "data"))
    assert isinstance(writer, db.LakeWriter)
    with writer.open() as con:
        con.execute("SELECT 1")
    copy = pickle.loads(pickle.dumps(writer))
    writer.close()  # a lake whose metadata is a DuckDB file is attached once per process
    assert (copy.url, copy.lake_data, copy._attached) == (lake_url, str(tmp_path / "data"), None)
    with copy.open() as con:
        assert con.execute("SELECT count(*) FROM scrape_runs").fetchone() == (0,)
    copy.close()


@pytest.mark.parametrize("change", ["longer", "shorter", "missing"])
def test_a_data_file_changed_outside_ducklake_is_an_error_not_a_price(lake_url: str, tmp_path: Path, change: str) -> None:
    """Readers check each file of the current snapshot against the size DuckLake recorded."""
    refresh(lake_url, ["runpod-graphql"])
    files = sorted((tmp_path / "data").rglob("*.parquet"))
    victim = next(p for p in files if "offer_versions" in p.parts)
    size = victim.stat().st_size
    if change == "missing":
        victim.unlink()
    else:
        body = victim.read_bytes()
        victim.write_bytes(body + b"\0" * 16 if change == "longer" else body[:-16])
    with pytest.raises(GpucatError, match="unreadable" if change == "missing" else f"DuckLake recorded {size:,}") as caught:
        db.connect(lake_url, read_only=True)
    assert str(victim) in str(caught.value)


def test_an_untouched_lake_passes_the_file_check(lake_url: str) -> None:
    refresh(lake_url, ["runpod-graphql"])
    with db.connect(lake_url, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM current_offers").fetchone()[0] > 0
        listed = con.execute("SELECT data_file, data_file_size_bytes FROM ducklake_list_files('lake', 'offer_versions')").fetchall()
        checked = con.execute(lake.DATA_FILES_SQL.read_text(encoding="utf-8"), {"data_path": str(Path(listed[0][0]).parents[2]) + "/"}).fetchall()
    assert set(listed) <= set(checked)  # the check resolves paths as DuckLake does
