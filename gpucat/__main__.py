"""The command line's entry: `python -m gpucat` and the `gpucat` script (pyproject.toml) both run `main`."""

import atexit
import gc
import os
import sys

# The exit status of a command that writes nothing but stdout and stderr (gpucat/cli/_app.py,
# `PRINT_ONLY`), once it ended normally; None for any other command or ending.
_print_only_status: int | None = None


def main() -> None:
    # Python's cyclic garbage collector stays off while the command line starts, and the command
    # turns it back on as its work begins (gpucat/cli/_app.py, `gc_off_until_command`).
    gc.disable()
    atexit.register(_end_without_teardown)  # registered first, so it runs after every other exit handler
    from gpucat.cli import _app

    _app.gc_off_until_command = True
    try:
        _app.app(prog_name="gpucat")
    except SystemExit as done:
        global _print_only_status
        if _app.command_ran in _app.PRINT_ONLY and (done.code is None or isinstance(done.code, int)):
            _print_only_status = done.code or 0
        raise


def _end_without_teardown() -> None:
    """End a print-only command's process here, after every exit handler, skipping the interpreter's teardown.

    Freeing every module and object one by one costs a read command about a seventh of its CPU
    time (`gpucat offers`), and such a command leaves nothing behind that teardown would
    finish: its connections are closed and its only output is stdout and stderr, flushed here.
    A flush that fails (a closed pipe) leaves the ending to Python, which reports it as usual.
    """
    if _print_only_status is None:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(_print_only_status)


if __name__ == "__main__":
    main()
