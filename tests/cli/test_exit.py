"""A print-only command ends its process without the interpreter's teardown (gpucat/__main__.py).

What it prints and the status it exits with are those of the same command ending as Python
ends any program; any other command, or an ending that is not a plain exit status, is left to
Python.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

import gpucat.__main__ as entry
from gpucat.cli._app import COMMANDS, PRINT_ONLY
from tests.conftest import ROOT

ENV = {k: v for k, v in os.environ.items() if not k.startswith("GPUCAT_") and k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
ENV["COLUMNS"] = "200"
ENV["GPUCAT_NOW"] = "2026-12-01T00:00:00Z"  # ages read on one clock in both runs

# The command line run as the script runs it (gpucat.__main__.main), beside a witness whose
# finalizer writes to stderr only when the interpreter tears its module down.
WITNESS = """
import os, sys
class Witness:
    def __del__(self):
        os.write(2, b"torn down\\n")
witness = Witness()
sys.argv = ["gpucat", *sys.argv[1:]]
from gpucat.__main__ import main
main()
"""
# The same command line without the script's entry: Python's own ending.
PLAIN = "import sys; from gpucat.cli import app; app(sys.argv[1:], prog_name='gpucat')"


def run(code: str, *args: str) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=ENV)
    return done.returncode, done.stdout, done.stderr


def test_print_only_commands_are_commands():
    assert PRINT_ONLY <= set(COMMANDS)
    assert {"refresh", "export", "report", "serve", "accept", "parse"}.isdisjoint(PRINT_ONLY)  # these write files or run on


@pytest.mark.parametrize(
    "args",
    [
        ["offers", "-n", "3"],
        ["offers", "--json", "-n", "2"],
        ["offers", "--gpu", "H100", "--spot", "--provider", "lambda"],  # an empty answer, explained
        ["sql", "SELECT 1 AS one"],
        ["sql", "SELECT nonsense"],  # a failing statement: status 1
    ],
    ids=" ".join,
)
def test_a_print_only_command_prints_and_exits_as_python_would_without_its_teardown(catalog_db, args):
    args = [*args, "--db", str(catalog_db)]
    status, out, err = run(WITNESS, *args)
    assert "torn down" not in err
    plain_status, plain_out, plain_err = run(PLAIN, *args)
    assert (status, out, err) == (plain_status, plain_out, plain_err)


@pytest.mark.parametrize(
    "args",
    [["--version"], ["offers", "--help"], ["offers", "--limit", "0"], ["parse", "no-such-source", "x.json"]],  # usage errors never run the command
    ids=" ".join,
)
def test_other_endings_are_left_to_python(args):
    status, out, err = run(WITNESS, *args)
    assert err.endswith("torn down\n")
    assert (status, out, err.removesuffix("torn down\n")) == run(PLAIN, *args)


class Closed(io.StringIO):
    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize(("status", "stdout", "ends"), [(None, io.StringIO(), False), (0, Closed(), False), (3, io.StringIO(), True)])
def test_the_exit_handler_ends_only_a_print_only_command_whose_output_flushed(monkeypatch, status, stdout, ends):
    ended: list[int] = []
    monkeypatch.setattr(entry, "_print_only_status", status)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(entry.os, "_exit", ended.append)
    entry._end_without_teardown()
    assert ended == ([status] if ends else [])
