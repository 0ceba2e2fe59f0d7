"""`gpucat refresh` says what each source is doing: live lines on a terminal, plain lines otherwise."""

from __future__ import annotations

import io
import json

from rich.console import Console
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.cli._progress import RefreshProgress, describe
from gpucat.scrapers import all_sources
from tests.conftest import FIXTURES

runner = CliRunner()


def test_plain_lines_when_not_a_terminal(tmp_path):
    two = [s for s in sorted(all_sources()) if not all_sources()[s].loads_first][:2]
    result = runner.invoke(app, ["refresh", "--replay", str(FIXTURES), "-p", ",".join(two), "--db", str(tmp_path / "g.duckdb")])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    for source in two:
        stages = [line.split(": ", 1)[1] for line in lines if line.startswith(f"{source}: ")]
        assert stages[:4] == ["fetching", "parsing", "validating", "loading"]
        assert stages[-1].startswith("done: ") and stages[-1].endswith(" rejected")


def test_quiet_with_json(tmp_path):
    result = runner.invoke(app, ["refresh", "--replay", str(FIXTURES), "-p", "aws-spot", "--json", "--db", str(tmp_path / "g.duckdb")])
    assert result.exit_code == 0, result.output
    assert result.stderr == "" and json.loads(result.stdout)["sources"][0]["status"] == "ok"


def test_live_lines_on_a_terminal_end_with_each_outcome():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=60, color_system=None)
    with RefreshProgress(["aws-spot", "vast-bundles"], quiet=False, console=console) as progress:
        assert progress.mode == "live"
        progress.update("aws-spot", "fetching", None)
        progress.update("aws-spot", "ok", "46 rows, 5 rejected")
        progress.update("vast-bundles", "failed", "FetchError: HTTP 503 from console.vast.ai after 4 tries " + "x" * 80)
    final = out.getvalue().split("\x1b[2K")[-2:]  # the last frame: one line per source
    text = "".join(final)
    assert "vast-bundles  failed: FetchError: HTTP 503" in text and "…" in text
    assert all(len(line) <= 60 for line in out.getvalue().splitlines())


def test_describe_says_done_or_failed_with_why():
    assert describe("ok", "3 rows, 0 rejected") == "done: 3 rows, 0 rejected"
    assert describe("failed", "ParseError:\n bad body") == "failed: ParseError: bad body"
    assert describe("fetching", None) == "fetching"
