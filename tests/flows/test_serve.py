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
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from gpucat.scrapers import all_sources
from gpucat.warehouse import db
from tests.conftest import FIXTURES, ROOT

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


def runs_of(api: str, deployment_id: str) -> list[dict]:
    body = {"limit": 200, "flow_runs": {"deployment_id": {"any_": [deployment_id]}}}
    return httpx.post(f"{api}/flow_runs/filter", json=body, timeout=10).json()


def deployment_ids(api: str) -> dict[str, str]:
    return {d["name"]: d["id"] for d in httpx.post(f"{api}/deployments/filter", json={"limit": 50}, timeout=10).json()}


def flow_run_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    try:
        with db.connect(path, read_only=True, wait_s=1) as con:
            return {r[0] for r in con.execute("SELECT DISTINCT flow_run_id FROM scrape_runs WHERE flow_run_id IS NOT NULL").fetchall()}
    except Exception:  # noqa: BLE001 - a file mid-creation or mid-migration: look again
        return set()


def test_two_served_databases_each_get_only_their_own_runs_one_at_a_time(tmp_path: Path):
    """Issue 24: a second `serve --db demo2.duckdb` took the first one's runs, and ticks faster
    than a refresh piled up ~40 flow-run processes behind the writer lock. Here a refresh takes
    several seconds and ticks come every 2 s, for two databases on one server."""
    from gpucat.flows.refresh import database_label

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
    warehouses = [tmp_path / "demo.duckdb", tmp_path / "demo2.duckdb"]
    server_log = tmp_path / "server.log"
    server = start(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-ui", "--analytics-off"],
        env,
        server_log,
    )
    serving: list[tuple[subprocess.Popen, Path]] = []
    running_at_once: dict[str, int] = {}
    try:
        wait_for(lambda: server_up(api), 90, "Prefect server", (server, server_log))
        for path in warehouses:
            log = tmp_path / f"serve-{path.stem}.log"
            args = [str(GPUCAT), "serve", "--every", "2", "--replay", str(FIXTURES), "--db", str(path), "--config", str(config), "--group", "quick"]
            serving.append((start(args, env | {"PREFECT_API_URL": api}, log), log))
        labels = [database_label(path) for path in warehouses]
        wait_for(lambda: set(labels) <= set(deployment_ids(api)), 90, "both deployments", (server, server_log), *serving)
        ids = deployment_ids(api)

        def watch() -> bool:
            for label in labels:
                active = [r for r in runs_of(api, ids[label]) if r["state_type"] in ("PENDING", "RUNNING")]
                running_at_once[label] = max(running_at_once.get(label, 0), len(active))
            return all(len(flow_run_ids(path)) >= 3 for path in warehouses)

        wait_for(watch, 170, "three recorded flow runs per database", (server, server_log), *serving)
        runs = {label: runs_of(api, ids[label]) for label in labels}
        snapshot = datetime.now(UTC)
    finally:
        for child, _ in serving:
            stop(child)
        stop(server)
    assert running_at_once == {label: 1 for label in labels}
    for path, label in zip(warehouses, labels, strict=True):
        own = {r["id"] for r in runs[label]}
        assert flow_run_ids(path) <= own, f"{path.name} holds runs of another deployment"
        states = [r["state_type"] for r in runs[label]]
        # Ticks that came while a refresh ran were cancelled, not queued: nothing waits.
        assert "CANCELLED" in states
        assert len([s for s in states if s in ("PENDING", "RUNNING")]) <= 1
        assert not [r for r in runs[label] if (r.get("state_name") or "") == "AwaitingConcurrencySlot"]
        overdue = [r for r in runs[label] if r["state_type"] == "SCHEDULED" and datetime.fromisoformat(r["expected_start_time"]) < snapshot - timedelta(seconds=60)]
        assert not overdue, f"ticks left waiting: {overdue}"
    print({label: sorted(Counter(r["state_type"] for r in runs[label]).items()) for label in labels})
