"""Readers are never locked out by a refresh, and a refresh waits for readers.

DuckDB locks a file per process (one writer or many readers), so every conflict here is
between two processes: the test process and a child it starts and stops itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpucat import pipeline
from gpucat.schemas.errors import DatabaseBusy
from gpucat.scrapers import all_sources
from gpucat.scrapers.capture import ReplayTransport
from gpucat.warehouse import db
from tests.conftest import FIXTURES, ROOT

# A few sources keep the test short: those others' normalization reads, and two offer sources.
SOURCES = [s for s in all_sources().values() if s.loads_first] + sorted(
    (s for s in all_sources().values() if "offers" in s.tables and not s.loads_first), key=lambda s: s.name
)[:2]

READER = """
import json, sys, time
from pathlib import Path
from typer.testing import CliRunner
from gpucat.cli import app

db, stop, ready = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
runner, reads, failures = CliRunner(), 0, []
while not stop.exists():
    result = runner.invoke(app, ["offers", "--db", db, "--json", "--limit", "5"])
    if result.exit_code == 0 and json.loads(result.stdout):
        reads += 1
        ready.touch()
    else:
        failures.append((result.stdout + str(result.exception or ""))[-300:])
print(json.dumps({"reads": reads, "failures": failures}))
"""

HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "read")
print("holding", flush=True)
time.sleep(float(sys.argv[3]))
con.close()
"""


def refresh(path: Path) -> list:
    return pipeline.refresh_catalog(path, SOURCES, replay_dir=FIXTURES)


@pytest.fixture
def loaded(tmp_path: Path) -> Path:
    path = tmp_path / "gpucat.duckdb"
    assert {r.status for r in refresh(path)} == {"ok"}
    return path


def hold(path: Path, mode: str, seconds: float) -> subprocess.Popen:
    """Another process holding the file, `read` or `write`, for `seconds`; returns once it holds it."""
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(path), mode, str(seconds)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert child.stdout is not None and child.stdout.readline().strip() == "holding"
    return child


def test_offers_in_a_loop_never_fail_during_a_slow_refresh(loaded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(loaded), str(stop), str(ready)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert reader.poll() is None, reader.communicate()
            assert time.monotonic() < deadline, "the reader never read"
            time.sleep(0.1)
        slow = ReplayTransport.handle_request

        def slow_fetch(self, request):  # a fetch that takes its time, as live ones do
            time.sleep(0.5)
            return slow(self, request)

        monkeypatch.setattr(ReplayTransport, "handle_request", slow_fetch)
        started = time.monotonic()
        runs = refresh(loaded)
        refresh_s = time.monotonic() - started
    finally:
        stop.touch()
        out, err = reader.communicate(timeout=60)
    outcome = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"reads": 0, "failures": [err[-500:]]}
    print(f"reads during the refresh: {outcome['reads']}, failures: {len(outcome['failures'])}, refresh {refresh_s:.1f} s")
    assert {r.status for r in runs} <= {"ok", "unchanged"}  # unchanged: the provider's version says so (AWS)
    assert outcome["failures"] == []
    assert outcome["reads"] >= 3, (outcome, refresh_s)


def test_refresh_waits_for_a_reader_that_holds_the_file(loaded: Path):
    reader = hold(loaded, "read", 2)
    try:
        started = time.monotonic()
        runs = refresh(loaded)
        waited = time.monotonic() - started
    finally:
        reader.wait(timeout=30)
    assert {r.status for r in runs} <= {"ok", "unchanged"}
    assert waited >= 1  # it did meet the reader, and outlasted it
    with db.connect(loaded, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM scrape_runs").fetchone() == (2 * len(SOURCES),)


def test_reader_waits_for_a_short_write(loaded: Path):
    writer = hold(loaded, "write", 1)
    try:
        started = time.monotonic()
        with db.connect(loaded, read_only=True) as con:
            assert con.execute("SELECT count(*) FROM current_offers").fetchone()[0] > 0
        assert time.monotonic() - started >= 0.5
    finally:
        writer.wait(timeout=30)


@pytest.mark.parametrize(
    ("mode", "read_only", "message"),
    [
        ("write", True, "is busy: a refresh is writing it; gave up after 0.3 s"),
        ("read", False, "is busy: other processes are reading or writing it; gave up after 0.3 s"),
    ],
)
def test_a_file_held_past_the_bound_is_one_clear_error(loaded: Path, mode: str, read_only: bool, message: str):
    other = hold(loaded, mode, 3)
    try:
        with pytest.raises(DatabaseBusy) as caught:
            db.connect(loaded, read_only=read_only, wait_s=0.3)
    finally:
        other.wait(timeout=30)
    assert str(caught.value) == f"{loaded} {message}, try again"


def test_cli_says_busy_in_one_line(loaded: Path, monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from gpucat.cli import app

    monkeypatch.setattr(db, "READ_WAIT_S", 0.3)
    other = hold(loaded, "write", 3)
    try:
        result = CliRunner().invoke(app, ["offers", "--db", str(loaded)])
    finally:
        other.wait(timeout=30)
    assert result.exit_code == 1
    assert result.output == f"error: {loaded} is busy: a refresh is writing it; gave up after 0.3 s, try again\n"


def test_a_refresh_that_cannot_start_says_so(tmp_path: Path, loaded: Path):
    """Held past the writer's bound, a refresh gives up before any source fetches, with one error
    naming the file. (A burst that cannot record says so on each of its runs: tests/speed/test_refresh_bursts.py.)"""
    writer = db.writer(loaded, wait_s=0.3)
    other = hold(loaded, "read", 3)
    try:
        with pytest.raises(DatabaseBusy, match=f"{loaded} is busy"):
            pipeline.refresh_sources(writer, [SOURCES[-1]], pipeline.FetchOptions(workdir=tmp_path, replay_dir=FIXTURES))
    finally:
        other.wait(timeout=30)
