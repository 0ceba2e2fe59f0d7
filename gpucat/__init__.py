"""gpucat: a provider catalog of rented GPUs for fine-tuning, in DuckDB.

The Python API (`gpucat.offers`, `gpucat.fit`, `gpucat.cost`, `gpucat.memory`) lives in
`gpucat.api` and is loaded on first use, so `import gpucat` and the command line stay cheap.
"""

from __future__ import annotations

from typing import Any

DISTRIBUTION = "gpucat"
API = ("offers", "fit", "cost", "memory")


def distribution_version() -> str:
    """The installed distribution's version (the one in pyproject.toml, as built)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return distribution_version()
    if name in API:
        from gpucat import api

        return getattr(api, name)
    raise AttributeError(f"module 'gpucat' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "__version__", *API])
