"""A throwaway PostgreSQL server on loopback for the team-warehouse tests.

The server comes from Debian's `postgresql` package (.ci/run installs it), started with its own
data directory and stopped at the end. initdb refuses to run as root, so as root the server runs
as `nobody` (the data directory is handed to it). The `gpucat` superuser logs in without a
password; roles whose names start with `gpucat_lake` need theirs (scram), as a team's would.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def server_binaries() -> Path | None:
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


BIN = server_binaries()
SKIP_REASON = "PostgreSQL server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_server_user(args: list[str]) -> list[str]:
    """The command as `nobody` when we are root (initdb refuses root), else as ourselves."""
    return ["runuser", "-u", "nobody", "--", *args] if os.geteuid() == 0 else args


@contextmanager
def running_server() -> Iterator[dict[str, object]]:
    assert BIN is not None
    home = Path(tempfile.mkdtemp(prefix="gpucat-pg-"))  # under /tmp, reachable by nobody (tmp_path is not)
    data, port = home / "data", free_port()
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(home, nobody.pw_uid, nobody.pw_gid)
    run = {"check": True, "capture_output": True, "text": True, "timeout": 120}
    subprocess.run(as_server_user([str(BIN / "initdb"), "-D", str(data), "-U", "gpucat", "--auth=trust", "-E", "UTF8", "--no-sync"]), **run)
    hba = data / "pg_hba.conf"
    rules = "host all /^gpucat_lake 127.0.0.1/32 scram-sha-256\n"
    subprocess.run(as_server_user(["sh", "-c", f"printf '%s' '{rules}' | cat - {hba} > {hba}.new && mv {hba}.new {hba}"]), **run)
    # fsync off: a test server that dies loses nothing we need.
    options = f"-h 127.0.0.1 -p {port} -k {home} -F -c max_connections=200"
    subprocess.run(as_server_user([str(BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "server.log"), "-w", "-t", "60", "start"]), **run)
    try:
        yield {"port": port, "home": home}
    finally:
        subprocess.run(as_server_user([str(BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]), capture_output=True, timeout=120)
        shutil.rmtree(home, ignore_errors=True)


def psql(postgres: dict[str, object], *args: str, database: str = "postgres") -> str:
    assert BIN is not None
    done = subprocess.run(
        [str(BIN / "psql"), "-h", "127.0.0.1", "-p", str(postgres["port"]), "-U", "gpucat", "-d", database, "-v", "ON_ERROR_STOP=1", "-qAt", *args],
        check=True, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.stdout


def new_database(postgres: dict[str, object], name: str) -> str:
    """A fresh database on the server, as a DuckLake URL for the `gpucat` superuser."""
    assert BIN is not None
    port = postgres["port"]
    subprocess.run(
        [str(BIN / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "gpucat", name], check=True, capture_output=True, text=True, timeout=60
    )
    return f"ducklake:postgres:dbname={name} host=127.0.0.1 port={port} user=gpucat"
