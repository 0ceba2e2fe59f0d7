"""The team warehouse on a real PostgreSQL: two refreshes of different sources at once, read during.

The server (tests/postgres_server.py) comes from Debian's `postgresql` package (.ci/run installs
it), started on loopback with its own data directory and stopped at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpucat.scrapers import all_sources
from gpucat.warehouse import db, lake, lake_schema
from tests.conftest import FIXTURES, ROOT
from tests.postgres_server import BIN, SKIP_REASON, new_database, running_server

# Two processes, different sources, different providers: each writes offer_versions,
# scrape_runs, rejected_rows and source_validators, so their commits do conflict.
FIRST = ["aws-spot", "aws-spot-advisor"]
SECOND = ["runpod-graphql", "lambda-instance-types"]
# The rate sources a refresh runs first on a warehouse without exchange rates (pipeline.with_prerequisites).
PREREQUISITES = [s.name for s in all_sources().values() if s.loads_first]
REFRESH_TIMEOUT_S = 300
CLI = [sys.executable, "-c", "from gpucat.cli import app; app()"]  # the `gpucat` command, in this interpreter


pytestmark = pytest.mark.skipif(BIN is None, reason=SKIP_REASON)


@pytest.fixture(scope="module")
def postgres() -> Iterator[dict[str, object]]:
    with running_server() as server:
        yield server


def gpucat(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_refreshes_at_once_while_reading(postgres: dict[str, object], tmp_path: Path) -> None:
    url = new_database(postgres, "concurrent")
    db.connect(url, lake_data=str(tmp_path / "lake-data")).close()  # the lake exists (migrated) before anyone reads it

    reads, failures, stop = [0], [], threading.Event()

    def read_in_a_loop() -> None:
        while not stop.is_set():
            try:
                con = db.connect(url, read_only=True)
                try:
                    con.execute("SELECT count(*) FROM current_offers").fetchone()
                    con.execute("SELECT count(*) FROM scrape_runs").fetchone()
                finally:
                    con.close()
                reads[0] += 1
            except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
                failures.append(f"{type(exc).__name__}: {exc}")

    reader = threading.Thread(target=read_in_a_loop, daemon=True)
    reader.start()
    env = {**os.environ, "GPUCAT_WAREHOUSE": url, "PREFECT_HOME": str(tmp_path / "prefect")}
    env.pop("PREFECT_API_URL", None)
    started = time.monotonic()
    procs = [gpucat("refresh", "--replay", str(FIXTURES), "-p", ",".join(names), "--json", env=env) for names in (FIRST, SECOND)]
    outputs = [p.communicate(timeout=REFRESH_TIMEOUT_S) for p in procs]
    elapsed = time.monotonic() - started
    stop.set()
    reader.join(timeout=60)

    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, f"refresh failed ({proc.returncode}): {out[-2000:]} {err[-2000:]}"
    assert failures == []
    assert reads[0] > 0

    con = db.connect(url, read_only=True)
    runs = con.execute("SELECT source, status FROM scrape_runs ORDER BY source").fetchall()
    assert [run for run in runs if run[0] in FIRST + SECOND] == sorted((name, "ok") for name in FIRST + SECOND)
    # A refresh that finds the warehouse without exchange rates loads the rate sources first (its
    # prerequisites): one or both of these did, depending on which saw the other's rates.
    assert {run for run in runs if run[0] not in FIRST + SECOND} <= {(name, "ok") for name in PREREQUISITES}
    lake_offers = con.execute("SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers ORDER BY ALL").fetchall()
    assert lake_schema.violations(con, db.lake_constraints()) == []
    con.close()

    # The same sources refreshed one after the other into a DuckDB file hold the same current offers.
    file = tmp_path / "file.duckdb"
    for names in (FIRST, SECOND):
        subprocess.run([*CLI, "refresh", "--replay", str(FIXTURES), "-p", ",".join(names), "--db", str(file), "--json"],
                       cwd=ROOT, env={**env, "GPUCAT_WAREHOUSE": ""}, check=True, capture_output=True, timeout=REFRESH_TIMEOUT_S)
    with db.connect(file, read_only=True) as file_con:
        assert lake_offers == file_con.execute("SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers ORDER BY ALL").fetchall()
    assert {row[0] for row in lake_offers} >= {"aws", "runpod", "lambda"}
    print(f"two refreshes at once: {elapsed:.1f} s; {reads[0]} reads during them, 0 failed")


def test_the_cli_reads_the_lake(postgres: dict[str, object], tmp_path: Path) -> None:
    url = new_database(postgres, "cli")
    env = {**os.environ, lake.DATA_ENV: str(tmp_path / "lake-data"), "PREFECT_HOME": str(tmp_path / "prefect")}
    env.pop("PREFECT_API_URL", None)
    refresh = subprocess.run([*CLI, "refresh", "--replay", str(FIXTURES), "-p", "runpod-graphql", "--warehouse", url, "--json"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=REFRESH_TIMEOUT_S)
    assert refresh.returncode == 0, refresh.stderr
    offers = subprocess.run([*CLI, "offers", "--warehouse", url, "--json"],
                            cwd=ROOT, env={k: v for k, v in env.items() if k != lake.DATA_ENV}, capture_output=True, text=True, timeout=120)
    assert offers.returncode == 0, offers.stderr
    assert '"runpod"' in offers.stdout


@pytest.mark.parametrize("round_", range(3))
def test_writers_creating_one_lake_take_turns(postgres: dict[str, object], tmp_path: Path, round_: int) -> None:
    """Several find the lake empty and migrate at once: each migration is applied exactly once."""
    url = new_database(postgres, f"fresh{round_}")
    errors: list[str] = []
    start = threading.Barrier(4)

    def open_and_close() -> None:
        try:
            start.wait(timeout=60)
            db.connect(url, lake_data=str(tmp_path / "lake-data")).close()
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=open_and_close) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    con = db.connect(url, read_only=True)
    assert [v for (v,) in con.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()] == [f.stem for f in db.migration_files()]
    assert con.execute(f"SELECT count(*) FROM {lake.LEDGER}").fetchone()[0] >= 1
    con.close()
