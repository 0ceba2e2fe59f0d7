"""The typer application every command module registers on, and which module holds each command.

It lives apart from `gpucat/cli/__init__.py` so that the command modules import it without any
file importing another in a loop.

The command modules load on demand: `COMMANDS` names each command's module, and the group
imports a module only when one of its commands is looked up (`gpucat offers` imports
`gpucat.cli.catalog` and no other command module; `gpucat --help` looks every command up, so
it lists each with its help text). tests/cli/test_lazy_commands.py checks `COMMANDS` against
what the modules register.
"""

from __future__ import annotations

import functools
import gc
import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import typer
import typer.main

from gpucat.cli._common import OneLineErrors

# Every command, in the order `gpucat --help` lists them, and the module of gpucat.cli that
# registers it.
COMMANDS = {
    "accept": "accept",
    "refresh": "catalog", "sources": "catalog", "status": "catalog", "offers": "catalog",
    "sql": "catalog", "parse": "catalog", "export": "catalog",
    "cost": "cost",
    "fit": "fit",
    "memory": "memory", "models": "memory",
    "providers": "providers",
    "report": "report",
    "serve": "serve",
}  # fmt: skip

# Commands that write nothing but stdout and stderr (their database connections closed as they
# return): `gpucat.__main__` ends their process without the interpreter's teardown.
PRINT_ONLY = frozenset({"offers", "status", "sources", "sql", "cost", "fit", "memory", "models", "providers"})
# The command the group ran in this process, once its callback starts (`_collecting`).
command_ran: str | None = None

# Set by gpucat.__main__.main, which turns Python's cyclic garbage collector off while the command
# line starts: importing typer, a command's module and DuckDB allocates many objects and frees
# almost none, and the collector's passes over them cost about 5% of `gpucat offers`. The command
# turns the collector back on as its own work begins (`_collecting`).
gc_off_until_command = False


class _Commands(MutableMapping[str, Any]):
    """A group's commands by name, each built from its module on first lookup.

    Names, order and membership come from `COMMANDS` without importing anything; a lookup
    (`get`, `[]`, `values()`, `items()`) imports the command's module and builds its click command.
    """

    def __init__(self, built: MutableMapping[str, Any]):
        self._built = {name: _collecting(name, command) for name, command in built.items()}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built and name in COMMANDS:
            self._built[name] = _collecting(name, _build(name))
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._built

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._built if name not in COMMANDS)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _build(name: str) -> Any:
    """The click command `name`, from the typer command its module registers on `app`."""
    importlib.import_module(f"{__package__}.{COMMANDS[name]}")
    for info in app.registered_commands:
        if (info.name or typer.main.get_command_name(info.callback.__name__)) == name:  # type: ignore[union-attr]
            return typer.main.get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode
            )
    raise KeyError(name)  # pragma: no cover  (COMMANDS names a command its module does not register)


def _collecting(name: str, command: Any) -> Any:
    """`command`, its callback first noting that `name` ran and turning the garbage collector back
    on if startup turned it off."""
    callback: Callable[..., Any] = command.callback

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        global gc_off_until_command, command_ran
        command_ran = name
        if gc_off_until_command:
            gc_off_until_command = False
            gc.enable()
        return callback(*args, **kwargs)

    command.callback = run
    return command


class LazyGroup(OneLineErrors):
    """The `gpucat` group: commands load from their modules when looked up (`_Commands`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # names only: listing imports no command module


app = typer.Typer(
    cls=LazyGroup,
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
