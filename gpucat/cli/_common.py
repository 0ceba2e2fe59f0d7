"""Shared CLI plumbing: one-line errors, JSON output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from schemas.errors import GpucatError

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print one line to stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def handle_errors(fn: F) -> F:
    """Turn expected failures into `error: <message>` and a non-zero exit, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GpucatError as exc:
            raise fail(str(exc), exc.exit_code) from None

    return wrapper  # type: ignore[return-value]


def echo_json(obj: Any) -> None:
    """Write one JSON document to stdout (dates as ISO strings)."""
    sys.stdout.write(json.dumps(obj, default=str, indent=2, sort_keys=False) + "\n")
