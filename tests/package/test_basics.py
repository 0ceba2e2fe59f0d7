"""Package basics: `python -m gpucat` is the command line, and `--version` reads the installed
distribution's version (the one pyproject.toml declares)."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.conftest import ROOT


def declared_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_python_m_gpucat_version_prints_the_installed_version():
    done = subprocess.run([sys.executable, "-m", "gpucat", "--version"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"gpucat {declared_version()}\n", "")


def test_python_m_gpucat_is_the_command_line():
    done = subprocess.run([sys.executable, "-m", "gpucat", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"COLUMNS": "100", "PATH": ""})
    assert done.returncode == 0
    assert "Usage: gpucat [OPTIONS] COMMAND" in done.stdout
    for command in ("refresh", "offers", "fit", "cost", "memory"):
        assert f" {command} " in done.stdout


def test_module_version_attribute_is_the_distribution_version():
    import gpucat

    assert gpucat.__version__ == declared_version()


def test_metadata_is_complete():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["readme"] == "README.md"
    assert project["license"] and project["description"]
    assert project["keywords"] and any(c.startswith("License ::") for c in project["classifiers"])
    assert (ROOT / "CHANGELOG.md").read_text().startswith("# Changelog")
