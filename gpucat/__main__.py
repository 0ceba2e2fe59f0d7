"""`python -m gpucat`: the same command line as the `gpucat` script."""

from gpucat.cli import app

if __name__ == "__main__":
    app(prog_name="gpucat")
