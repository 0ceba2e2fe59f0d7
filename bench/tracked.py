"""The tracked refresh against the in-process one (issue 26: at most 2x).

    uv run python bench/tracked.py [--rounds N]

Starts a real Prefect server (`prefect server start` on 127.0.0.1, a free port, its own
PREFECT_HOME in a temporary folder, analytics off), waits for it to answer, then times, in fresh
processes and alternating which goes first, `gpucat refresh --replay fixtures` into a new
database twice per round: in process (no PREFECT_API_URL), and as a Prefect flow run on that
server (PREFECT_API_URL set: the same orchestrator, its steps as tasks). Prints each command's
median wall time, the ratio of the medians, and how long the server took to start; stops the
server at the end, even on failure or Ctrl-C. Both sides import the same stack and write the
same database, so the ratio is what tracking costs.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
# A loaded machine starts Prefect's server slowly (its first start migrates its database).
SERVER_START_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GPUCAT_"))}
    return env | {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"}


@contextmanager
def prefect_server(home: Path) -> Iterator[tuple[str, float]]:
    """(API URL, seconds it took to answer) of a `prefect server start` that stops on exit."""
    port = _free_port()
    env = _base_env() | {"PREFECT_HOME": str(home), "PREFECT_UI_ENABLED": "false"}
    log = (home / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/api"
    started = time.perf_counter()
    try:
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"prefect server exited ({server.returncode}): see {home / 'server.log'}")
            if time.perf_counter() - started > SERVER_START_TIMEOUT_S:
                raise RuntimeError(f"prefect server did not answer within {SERVER_START_TIMEOUT_S} s")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        yield url, time.perf_counter() - started
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def refresh_s(db: Path, env: dict[str, str]) -> float:
    """Wall time of one `gpucat refresh --replay fixtures` into the new database `db`."""
    args = [sys.executable, "-c", "from gpucat.cli import app; app()", "refresh", "--replay", str(FIXTURES), "--db", str(db), "--json"]
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"refresh failed ({done.returncode}): {done.stderr[-2000:] or done.stdout[-2000:]}")
    return wall


def measure(rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="gpucat-tracked-") as tmp:
        work = Path(tmp)
        (work / "prefect").mkdir()
        with prefect_server(work / "prefect") as (url, startup_s):
            plain = _base_env()
            tracked = plain | {"PREFECT_API_URL": url, "PREFECT_HOME": str(work / "prefect")}
            refresh_s(work / "warm.duckdb", tracked)  # the first flow run registers the flow: not timed
            times: dict[str, list[float]] = {"in_process": [], "tracked": []}
            for n in range(rounds):
                order = [("in_process", plain), ("tracked", tracked)]
                for name, env in order if n % 2 == 0 else order[::-1]:
                    times[name].append(refresh_s(work / f"{name}-{n}.duckdb", env))
    in_process, flow = statistics.median(times["in_process"]), statistics.median(times["tracked"])
    return {"in_process_s": in_process, "tracked_s": flow, "ratio": flow / in_process, "server_start_s": startup_s}


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="pairs of refreshes to time (default 3)")
    figures = measure(parser.parse_args(argv).rounds)
    print(f"fixtures refresh, in process:              {figures['in_process_s']:.2f} s (median)")
    print(f"fixtures refresh, Prefect flow run:        {figures['tracked_s']:.2f} s (median, running server)")
    print(f"tracked / in process:                      {figures['ratio']:.2f}x (bar: at most 2x)")
    print(f"prefect server start until it answered:    {figures['server_start_s']:.1f} s")
    return figures


if __name__ == "__main__":
    main()
