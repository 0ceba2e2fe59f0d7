"""The typer application every command module registers on.

It lives apart from `gpucat/cli/__init__.py` so that the command modules import it, and the
package's `__init__` imports them, without any file importing another in a loop.
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
