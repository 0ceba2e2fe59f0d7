"""The `gpucat` command line: a thin layer over functions the tests call directly.

The typer `app` is built in `gpucat/cli/_app.py`, and each command module registers its commands
on it when imported. The modules load on demand (`gpucat/cli/_app.py`'s `COMMANDS`): a command
imports its own module and no other, and heavy imports (Prefect, polars) happen inside the
commands, so `gpucat offers` and `gpucat --help` stay fast.
"""

from __future__ import annotations

import importlib
import types

from gpucat.cli._app import COMMANDS, app

__all__ = ["accept", "app", "catalog", "cost", "fit", "memory", "providers", "report", "serve"]


def __getattr__(name: str) -> types.ModuleType:
    """`gpucat.cli.catalog` and the other command modules, imported on first use (PEP 562)."""
    if name in COMMANDS.values():
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
