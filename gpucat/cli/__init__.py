"""The `gpucat` command line: a thin layer over functions the tests call directly.

The typer `app` is built in `gpucat/cli/_app.py`; each command module registers its commands
on it when imported, and this file imports them all, so `gpucat.cli:app` (the console script)
has every command. Heavy imports (Prefect, polars) happen inside the commands so
`gpucat --help` stays fast.
"""

from __future__ import annotations

from gpucat.cli import accept, catalog, cost, fit, memory, providers, report, serve
from gpucat.cli._app import app

__all__ = ["accept", "app", "catalog", "cost", "fit", "memory", "providers", "report", "serve"]
