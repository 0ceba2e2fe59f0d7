"""Commands load on demand (gpucat/cli/_app.py's COMMANDS), and piped tables print without rich.

`gpucat offers` must not pay for every other command's imports, yet `gpucat --help` lists them
all; a table written to a pipe must be byte for byte what rich's Console writes there.
"""

from __future__ import annotations

import gc
import importlib
import io
import json
import os
import subprocess
import sys

import pytest
import typer.main
from rich.console import Console
from rich.text import Text

from gpucat.cli import app
from gpucat.cli._app import COMMANDS
from gpucat.cli._render import _print_styled, styles_shown
from tests.conftest import ROOT

PROBE = """
import json, sys
from gpucat.cli import app
try:
    app(sys.argv[1:], prog_name="gpucat")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


# Piped, as wide as the help needs, and without gpucat's settings or a forced terminal.
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GPUCAT_") and k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
ENV["COLUMNS"] = "200"


def probe(*args: str) -> tuple[str, set[str]]:
    """Run the command line in a fresh interpreter, stdout piped: its output and the modules it imported."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=ENV)  # fmt: skip
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1]))


def command_modules(modules: set[str]) -> set[str]:
    return {m.removeprefix("gpucat.cli.") for m in modules} & set(COMMANDS.values())


def test_commands_names_each_command_and_the_module_that_registers_it():
    for module in set(COMMANDS.values()):
        importlib.import_module(f"gpucat.cli.{module}")
    registered = {
        info.name or typer.main.get_command_name(info.callback.__name__): info.callback.__module__.removeprefix("gpucat.cli.")
        for info in app.registered_commands
    }  # fmt: skip
    assert registered == COMMANDS


def test_help_lists_every_command_in_order_with_its_help_and_imports_them_all():
    out, modules = probe("--help")
    listed = [line.split()[1] for line in out.splitlines() if line.startswith("│ ") and line.split()[1] in COMMANDS]
    assert listed == list(COMMANDS)
    group = typer.main.get_command(app)
    for name in COMMANDS:
        first_line = group.commands[name].help.split("\n")[0]
        assert first_line[:40] in out, name
    assert command_modules(modules) == set(COMMANDS.values())


@pytest.mark.parametrize("name", ["offers", "memory", "report"])
def test_a_command_imports_its_own_module_and_no_other(name):
    out, modules = probe(name, "--help")
    assert f"Usage: gpucat {name} [OPTIONS]" in out
    assert command_modules(modules) == {COMMANDS[name]}


def test_piped_offers_imports_one_command_module_and_no_rich_console(catalog_db):
    out, modules = probe("offers", "--gpu", "H100", "--db", str(catalog_db))
    assert out.splitlines()[1].split() == ["provider", "gpu", "gpus", "GB/gpu", "$/gpu-h", "$/h", "market", "tier", "stock",
                                           "age", "region", "instance"]  # fmt: skip
    assert command_modules(modules) == {"catalog"}
    assert {"rich.console", "gpucat.memory", "gpucat.cost"} & modules == set()


def test_an_unknown_command_is_still_one_error_line_with_a_suggestion():
    done = subprocess.run([sys.executable, "-m", "gpucat", "offrs"], cwd=ROOT, capture_output=True, text=True, timeout=120, env=ENV)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "error: No such command 'offrs'. Did you mean 'offers'? (see: gpucat --help)\n",
    )


LINES = [
    ("italic", "replayed data 2-884 days old, captured 2024-07-01..2026-11-30 (fixtures)"),
    ("bold", "provider  gpu        gpus  GB/gpu  $/gpu-h"),
    ("dim", "────────  ─────────  ────  ──────  ───────"),
    ("", "vast      H100-PCIe     1      80     1.60"),
    ("", "a line far wider than the console's forty columns, which soft wrap leaves whole " * 3),
    ("", "東京リージョン  ✓ 🚀  wide cells"),
    ("", "[bold]not markup[/bold] :smile: not an emoji"),
    ("", "trailing spaces   "),
    ("", ""),
]


@pytest.mark.parametrize("err", [False, True], ids=["stdout", "stderr"])
def test_a_piped_table_is_what_rich_writes_to_a_pipe(monkeypatch, err):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    expected = io.StringIO()
    console = Console(file=expected, width=40, highlight=False, soft_wrap=True)
    for style, text in LINES:
        console.print(Text(text, style=style))
    got = io.StringIO()
    monkeypatch.setattr(sys, "stderr" if err else "stdout", got)
    _print_styled(LINES, limit=40, err=err)
    assert got.getvalue() == expected.getvalue()


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("env", [{}, {"FORCE_COLOR": "1"}, {"FORCE_COLOR": ""}, {"TTY_COMPATIBLE": "1"}, {"TTY_COMPATIBLE": "0"},
                                 {"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "x", "FORCE_COLOR": "1"},
                                 {"NO_COLOR": "1"}], ids=str)  # fmt: skip
def test_styles_are_left_to_rich_exactly_where_rich_sees_a_terminal(monkeypatch, env):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for stream in (io.StringIO(), Tty()):
        assert styles_shown(stream) == Console(file=stream).is_terminal


GC_PROBE = """
import gc, json, sys
seen = {}
def hook(event, args):
    if event == "import" and args[0] in ("typer", "gpucat.cli._render", "duckdb"):
        seen.setdefault(args[0], gc.isenabled())
sys.addaudithook(hook)
sys.argv = ["gpucat", *sys.argv[1:]]
from gpucat.__main__ import main
try:
    main()
finally:
    print(json.dumps({**seen, "command": gc.isenabled()}), file=sys.stderr)
"""


def test_the_script_starts_without_the_garbage_collector_and_the_command_runs_with_it(catalog_db):
    done = subprocess.run([sys.executable, "-c", GC_PROBE, "offers", "-n", "1", "--db", str(catalog_db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=ENV)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == {
        "typer": False,
        "gpucat.cli._render": False,
        "duckdb": False,
        "command": True,
    }


def test_a_command_run_in_process_leaves_the_collector_as_its_caller_set_it(catalog_db):
    from typer.testing import CliRunner

    gc.disable()
    try:
        result = CliRunner().invoke(app, ["offers", "-n", "1", "--db", str(catalog_db)])
        assert result.exit_code == 0, result.output
        assert not gc.isenabled()
    finally:
        gc.enable()
