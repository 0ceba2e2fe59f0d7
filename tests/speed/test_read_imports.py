"""Read commands start fast: none of them imports the write side's heavy libraries.

Checked by module name in a fresh interpreter (not by timing, which varies with the machine).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

# What the refresh path needs and a read never should: each costs 0.05-1 s to import.
HEAVY = ("polars", "pandera", "prefect", "httpx", "pyarrow", "pydantic")

PROBE = """
import json, sys
from gpucat.cli import app
try:
    app(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m.split(".")[0] for m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["offers", "--limit", "3"],
        ["sql", "select count(*) from current_offers"],
        ["status"],
        ["fit", "--model", "llama-3.1-8b", "--method", "qlora", "--batch", "1", "--seq-len", "2048"],
        ["memory", "--model", "llama-3.1-8b", "--method", "qlora", "--batch", "4", "--seq-len", "2048"],
        ["--help"],
    ],
    ids=lambda args: args[0],
)
def test_read_commands_import_no_heavy_library(catalog_db, args):
    db = [] if args[0] in ("memory", "--help") else ["--db", str(catalog_db)]
    done = subprocess.run([sys.executable, "-c", PROBE, *args, *db], cwd=ROOT, capture_output=True, text=True, timeout=120)
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "gpucat" in modules
    assert sorted(modules & set(HEAVY)) == []
