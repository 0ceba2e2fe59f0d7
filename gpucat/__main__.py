"""The command line's entry: `python -m gpucat` and the `gpucat` script (pyproject.toml) both run `main`."""

import gc


def main() -> None:
    # Python's cyclic garbage collector stays off while the command line starts, and the command
    # turns it back on as its work begins (gpucat/cli/_app.py, `gc_off_until_command`).
    gc.disable()
    from gpucat.cli import _app

    _app.gc_off_until_command = True
    _app.app(prog_name="gpucat")


if __name__ == "__main__":
    main()
