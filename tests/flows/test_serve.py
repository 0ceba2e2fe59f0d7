"""`gpucat serve` on a real Prefect server: scheduled runs land in the warehouse.

The test starts its own Prefect server on 127.0.0.1 (own PREFECT_HOME, a free port, no
analytics), serves one small schedule group every few seconds in replay mode, waits for two
scheduled flow runs to record their sources in `scrape_runs`, then stops what it started.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from scrapers import all_sources
from tests.conftest import FIXTURES, ROOT
from warehouse import db

GPUCAT = Path(sys.executable).with_name("gpucat")
# A small group keeps each run short on a slow machine: the rates, and one offer source.
QUICK = [s.name for s in all_sources().values() if s.loads_first] + sorted(
    s.name for s in all_sources().values() if "offers" in s.tables and not s.loads_first
)[:1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """A child in its own process group, so stopping it stops the processes it started."""
    with log.open("wb") as out:
        return subprocess.Popen(args, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop(child: subprocess.Popen) -> None:
    if child.poll() is None:
        os.killpg(child.pid, signal.SIGINT)
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=10)


def wait_for(check, timeout: float, what: str, *children: tuple[subprocess.Popen, Path]) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        for child, log in children:
            assert child.poll() is None, f"{log.name} exited: {log.read_text(errors='replace')[-3000:]}"
        if time.monotonic() > deadline:
            logs = "\n".join(log.read_text(errors="replace")[-3000:] for _, log in children)
            pytest.fail(f"no {what} within {timeout:.0f} s\n{logs}")
        time.sleep(1)


def server_up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def flow_run_states(api: str) -> list:
    try:
        runs = httpx.post(f"{api}/flow_runs/filter", json={"limit": 20}, timeout=10).json()
    except httpx.HTTPError as exc:
        return [repr(exc)]
    return [(r["name"], r["state_type"], (r.get("state") or {}).get("message"), r.get("expected_start_time")) for r in runs]


def flow_runs_recorded(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with db.connect(path, read_only=True, wait_s=1) as con:
            return con.execute(
                "SELECT count(DISTINCT flow_run_id) FROM scrape_runs WHERE status = 'ok' AND flow_run_id IS NOT NULL"
            ).fetchone()[0]
    except Exception:  # noqa: BLE001 - a file mid-creation or mid-migration: look again
        return 0


def test_served_schedule_lands_two_flow_runs_in_the_warehouse(tmp_path: Path):
    config = tmp_path / "schedules.toml"
    config.write_text(
        f'[groups.quick]\ncron = "0 * * * *"\nsources = {QUICK!r}\n\n[groups.others]\ncron = "0 0 * * *"\nrest = true\n'.replace("'", '"')
    )
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GPUCAT_"))}
    env |= {
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_RUNNER_POLL_FREQUENCY": "2",
    }
    warehouse = tmp_path / "served.duckdb"
    server_log, serve_log = tmp_path / "server.log", tmp_path / "serve.log"
    server = start(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-ui", "--analytics-off"],
        env,
        server_log,
    )
    serving = None
    try:
        wait_for(lambda: server_up(api), 90, "Prefect server", (server, server_log))
        started = time.monotonic()
        serving = start(
            [str(GPUCAT), "serve", "--every", "8", "--replay", str(FIXTURES), "--db", str(warehouse), "--config", str(config), "--group", "quick"],
            env | {"PREFECT_API_URL": api},
            serve_log,
        )
        try:
            wait_for(lambda: flow_runs_recorded(warehouse) >= 2, 150, "two scheduled flow runs in scrape_runs", (server, server_log), (serving, serve_log))
        except BaseException:
            print("flow runs:", flow_run_states(api))
            raise
        print(f"two scheduled runs recorded {time.monotonic() - started:.0f} s after gpucat serve started")
    finally:
        if serving is not None:
            stop(serving)
        stop(server)
    with db.connect(warehouse, read_only=True) as con:
        sources = {row[0] for row in con.execute("SELECT DISTINCT source FROM scrape_runs").fetchall()}
    assert sources == set(QUICK)
