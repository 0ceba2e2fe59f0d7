"""The `gpucat` command line: a thin layer over functions the tests call directly.

Each command module registers its commands on `app`; heavy imports (Prefect, polars)
happen inside the commands so `gpucat --help` stays fast.
"""

from __future__ import annotations

import typer

from gpucat.cli._common import OneLineErrors

app = typer.Typer(
    cls=OneLineErrors,
    name="gpucat",
    help="Which rented GPU fits a fine-tuning job, from whom, and at what price.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)



def _print_version(value: bool) -> None:
    if value:
        from gpucat import distribution_version

        typer.echo(f"gpucat {distribution_version()}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                 help="Print the installed gpucat version and exit."),
) -> None:
    """Which rented GPU fits a fine-tuning job, from whom, and at what price."""


# Command modules register themselves on import.
from gpucat.cli import accept as _accept  # noqa: E402,F401
from gpucat.cli import catalog as _catalog  # noqa: E402,F401
from gpucat.cli import cost as _cost  # noqa: E402,F401
from gpucat.cli import fit as _fit  # noqa: E402,F401
from gpucat.cli import memory as _memory  # noqa: E402,F401
from gpucat.cli import providers as _providers  # noqa: E402,F401
from gpucat.cli import report as _report  # noqa: E402,F401
from gpucat.cli import serve as _serve  # noqa: E402,F401
