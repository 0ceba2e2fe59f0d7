"""Shared CLI plumbing: one-line errors, JSON output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

try:  # recent typer vendors click as typer._click; older releases use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException

from gpucat.schemas.errors import GpucatError, SettingError

F = TypeVar("F", bound=Callable[..., Any])


MAX_ERROR_CHARS = 400


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print one line to stderr (at most MAX_ERROR_CHARS) and return the Exit to raise."""
    line = " ".join(message.split())
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    typer.echo(f"error: {line}", err=True)
    return typer.Exit(code)


# The flag that sets each setting a library error names (gpucat.memory.settings.WORDS has the
# same keys): the command line says `--seq-len` where the library says "sequence length".
FLAGS = {
    "method": "--method", "precision": "--precision", "optimizer": "--optimizer", "optimizer_impl": "--optimizer-impl",
    "sharding": "--sharding", "offload": "--offload", "attention": "--attention", "cross_entropy": "--cross-entropy",
    "quant": "--quant", "batch_size": "--batch", "batch": "--batch", "seq_len": "--seq-len", "target_len": "--target-len",
    "gpus": "--gpus", "grad_accumulation": "--grad-accum", "grad_accum": "--grad-accum", "lora_rank": "--lora-rank",
    "lora_targets": "--lora-targets", "lora_dropout": "--lora-dropout", "grad_checkpointing": "--grad-checkpointing",
    "offload_activations": "--offload-activations", "optimizer_in_backward": "--optimizer-in-backward",
    "peft_upcast": "--peft-upcast", "bitsandbytes": "--bitsandbytes", "model": "--model", "config": "--config",
    "max_gpus": "--max-gpus", "headroom": "--headroom", "risk": "--risk",
}  # fmt: skip


def error_line(exc: GpucatError) -> str:
    """An expected failure as the command line says it: settings named by their flags."""
    return exc.spelled(FLAGS) if isinstance(exc, SettingError) else str(exc)


def handle_errors(fn: F) -> F:
    """Turn expected failures into `error: <message>` and a non-zero exit, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GpucatError as exc:
            raise fail(error_line(exc), exc.exit_code) from None
        except Exception as exc:
            # A database that is corrupt, truncated or locked surfaces as a DuckDB error at any
            # query; it is an expected failure too (checked by module so duckdb is not imported).
            if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb"):
                raise fail(f"database error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
            raise

    return wrapper  # type: ignore[return-value]


def require_extra(module: str, extra: str, what: str) -> None:
    """One clear line when a command needs a package that only an extra installs (pyproject.toml)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise GpucatError(f"{what} needs the {module} package: install gpucat[{extra}] "
                          f"(pip install 'gpucat[{extra}]', or uv sync --extra {extra})")


def echo_json(obj: Any) -> None:
    """Write one JSON document to stdout (dates as ISO strings)."""
    from gpucat.cli._render import strict_json

    sys.stdout.write(json.dumps(strict_json(obj), default=str, indent=2, sort_keys=False, allow_nan=False) + "\n")


class OneLineErrors(TyperGroup):
    """Usage errors (a bad option value, an unknown option) as one `error:` line, like every other
    expected failure, instead of typer's boxed panel; the help screens keep rich's layout."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except ClickException as exc:
            if type(exc).__name__ != "NoArgsIsHelpError":  # the help is already printed
                ctx = getattr(exc, "ctx", None)
                hint = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
                fail(exc.format_message() + hint, exc.exit_code)
            sys.exit(exc.exit_code)
        except typer.Abort:
            fail("aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def warehouse_target(value: str) -> Path | str:
    """A DuckLake URL stays as typed (a Path would fold an object-store URL's slashes); else a file."""
    from gpucat.warehouse.lake import is_lake  # duckdb loads only for a command given a warehouse

    if not value.strip():
        raise typer.BadParameter("is empty; give a DuckDB file or a ducklake: URL")
    return value if is_lake(value) else Path(value)


# The sample capture shipped inside the package (a link to the repository's fixtures/ in a
# checkout, the same files in the wheel): what `gpucat refresh --demo` replays.
DEMO_CAPTURE = (Path(__file__).resolve().parent.parent / "fixtures").resolve()


def cli_settings() -> Any:
    """gpucat's settings, read from the environment as a command starts (gpucat.schemas.settings)."""
    from gpucat.schemas.settings import Settings

    return Settings.from_env()


def clock_now(settings: Any = None) -> Any:
    """The clock read commands age data against: `$GPUCAT_NOW` (ISO 8601, UTC unless it says) when
    set, e.g. to see what a catalog looks like a year on, else None (the database's now())."""
    return (settings or cli_settings()).now


def catalog_target(db: Any, settings: Any = None) -> Any:
    """The database a command opens: --db, else $GPUCAT_WAREHOUSE, $GPUCAT_DB, else the user data
    directory's gpucat.duckdb (a Path, or a ducklake: URL as typed)."""
    from gpucat.warehouse.db import db_path

    return db_path(db, settings or cli_settings())


def open_catalog(db: Any, *, read_only: bool = True, settings: Any = None) -> Any:
    """The warehouse for a read command, on the clock of `clock_now`."""
    from gpucat.warehouse.db import connect

    settings = settings or cli_settings()
    return connect(catalog_target(db, settings), read_only=read_only, now=settings.now, lake_data=settings.lake_data)


# Options several commands take, defined once.
DbOption = Annotated[
    Any,  # a Path, or a ducklake: URL kept as typed (typer has no Path | str; the parser decides)
    typer.Option(
        "--db",
        "--warehouse",
        parser=warehouse_target,
        metavar="PATH|URL",
        help="DuckDB file or ducklake: URL (default: $GPUCAT_DB, else the user data dir).",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def finite(value: float | None) -> float | None:
    """A number option's callback: nan and infinities are refused (every comparison with nan is
    false, so a nan filter or size would silently mean "no limit")."""
    import math

    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


def split_list(values: list[str] | None) -> list[str]:
    """Repeated options and comma-separated lists both work: -p aws,azure -p runpod."""
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


# `fit` and `cost`: the chosen configuration as another tool's task spec (gpucat.launch).
LaunchFormatOption = Annotated[str | None, typer.Option(
    "--format", show_default=False, help="Row --pick as a task: sky | dstack.",
)]
# Checked by gpucat.launch.picked (a typer range would widen the help's type column).
PickOption = Annotated[int, typer.Option("--pick", show_default=False, help="Row for --format (default 1).")]


def print_launch_spec(row: Any, disk_gb: float, tool: str, name: str, *, cost: bool) -> None:
    """Print the task spec of one `fit` or `cost` row, or refuse with one error line."""
    from gpucat import launch

    target = launch.cost_target(row, disk_gb) if cost else launch.fit_target(row, disk_gb)
    sys.stdout.write(launch.spec(target, tool, name))
