"""The built wheel, installed as a user installs it: one top-level package, the demo inside, and
answers from an empty directory beside PyPI's `schemas`, `flows` and `scrapers` distributions.

The wheel is built as `uv build` builds it (an sdist, then the wheel from the sdist) and
installed with `uv pip` into a fresh virtual
environment with no extras (the base install). The install needs the package registry; only
when the registry cannot be reached is the test skipped, with that reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

# Distributions on PyPI whose top-level packages are named like gpucat's floors (issue 20): each
# writes site-packages/<name>/, which a wheel that shipped `schemas/` would share with them.
SHADOWS = ("schemas", "flows", "scrapers")
UNREACHABLE = ("failed to fetch", "connect error", "dns error", "network is unreachable", "timed out", "connection refused",
               "failed to lookup address", "temporary failure in name resolution")  # fmt: skip


def uv() -> str:
    found = shutil.which("uv")
    if found is None:
        pytest.fail("uv is not on PATH: the wheel test builds with `uv build` as CI does")
    return found


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", **kwargs.pop("env", {})}
    return subprocess.run(args, capture_output=True, text=True, timeout=kwargs.pop("timeout", 900), env=env, **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = run([uv(), "build", "--out-dir", str(out), str(ROOT)])
    assert done.returncode == 0, done.stderr[-2000:]
    [built] = out.glob("*.whl")
    assert len(list(out.glob("*.tar.gz"))) == 1
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel (no extras) and PyPI's schemas, flows and scrapers; its bin/."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    done = run([uv(), "venv", "--quiet", "--python", sys.executable, str(venv)])
    assert done.returncode == 0, done.stderr
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    # The look-alikes go in without their own dependencies (PyPI's `flows` needs a Windows-only
    # package that does not build here): what matters is that they take the generic names.
    for args in ([str(wheel)], ["--no-deps", *SHADOWS]):
        done = run([uv(), "pip", "install", "--python", str(python), *args])
        if done.returncode != 0 and any(s in done.stderr.lower() for s in UNREACHABLE):
            pytest.skip(f"the package registry is unreachable: {done.stderr.strip().splitlines()[-1]}")
        assert done.returncode == 0, done.stderr[-3000:]
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    for name in SHADOWS:  # the generic names are really taken in this venv
        assert (site / name / "__init__.py").is_file(), f"PyPI's {name} did not install site-packages/{name}/"
    return python.parent


def test_the_wheel_holds_one_top_level_package_and_its_dist_info(wheel):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert tops == {"gpucat", f"gpucat-{version}.dist-info"}


def test_the_wheel_holds_every_floor_under_gpucat(wheel):
    """Each file of the floors' folders is in the wheel under gpucat/ (the links followed)."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for folder in ("schemas", "scrapers", "warehouse", "flows"):
        tracked = run(["git", "ls-files", folder], cwd=ROOT)  # what the repository holds, not stray local files
        files = tracked.stdout.split()
        assert tracked.returncode == 0 and files
        assert [f for f in files if f"gpucat/{f}" not in names] == []


def test_the_wheel_bundles_the_sample_capture_byte_for_byte(wheel):
    """What --demo replays is what `--replay fixtures` replays in a checkout: every file of
    fixtures/ but its Python maintenance script, with the same bytes."""
    with zipfile.ZipFile(wheel) as archive:
        bundled = {n.removeprefix("gpucat/fixtures/"): archive.read(n) for n in archive.namelist() if n.startswith("gpucat/fixtures/")}
    expected = {p.relative_to(FIXTURES).as_posix(): p.read_bytes() for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".py"}
    expected = {k: v for k, v in expected.items() if "__pycache__" not in k}
    assert sorted(bundled) == sorted(expected)
    assert bundled == expected


def test_the_installed_wheel_answers_from_an_empty_directory(installed, tmp_path):
    """refresh --demo, fit and cost, from a directory with nothing in it: the database goes to the
    user data directory (here a temp XDG_DATA_HOME), not into the current directory."""
    cwd = tmp_path / "empty"
    cwd.mkdir()
    data = tmp_path / "data"
    env = {"XDG_DATA_HOME": str(data), "COLUMNS": "200", "PREFECT_API_URL": ""}
    gpucat = str(installed / "gpucat")

    refresh = run([gpucat, "refresh", "--demo", "--json"], cwd=cwd, env=env)
    assert refresh.returncode == 0, refresh.stderr[-3000:]
    report = json.loads(refresh.stdout)
    statuses = {row["source"]: row["status"] for row in report["sources"]}
    assert report["state"] == "COMPLETED" and set(statuses.values()) <= {"ok", "skipped"}, statuses
    assert sum(row["rows_valid"] or 0 for row in report["sources"]) > 0
    assert (data / "gpucat" / "gpucat.duckdb").is_file()

    fit = run([gpucat, "fit", "--model", "llama-3.1-8b", "--method", "qlora", "--json"], cwd=cwd, env=env)
    assert fit.returncode == 0, fit.stderr[-3000:]
    fits = json.loads(fit.stdout)
    assert fits["model"] and fits["offers"] and all(row["gpu_model"] and row["usd_per_hour"] > 0 for row in fits["offers"])

    cost = run([gpucat, "cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M", "--json"], cwd=cwd, env=env)
    assert cost.returncode == 0, cost.stderr[-3000:]
    costs = json.loads(cost.stdout)
    assert costs and all(row["total_usd"] > 0 and row["hours"] > 0 for row in costs)

    status = run([gpucat, "status"], cwd=cwd, env=env)
    assert status.returncode == 0, status.stderr[-3000:]
    assert f"database: {data / 'gpucat' / 'gpucat.duckdb'}" in status.stdout
    assert list(cwd.iterdir()) == []  # nothing written where the user happened to stand


def test_a_command_whose_extra_is_missing_names_the_extra(installed, tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    done = run([str(installed / "gpucat"), "report", "--out", str(tmp_path / "r.html")], cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: gpucat report needs the plotly package: install gpucat[report] (pip install 'gpucat[report]', or uv sync --extra report)"
    ]
    assert not (tmp_path / "r.html").exists()
