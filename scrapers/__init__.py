"""Provider sources. Each module under this package that defines `SOURCE` is registered here,
in this one place, by discovery: adding a provider means adding its module, its fixtures and
its test, nothing else."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from gpucat.schemas.errors import UserInputError
from gpucat.scrapers.base import Source

_INFRASTRUCTURE = {"base", "http", "capture", "normalize"}


@cache
def all_sources() -> dict[str, Source]:
    """Every registered source by name, in a stable order."""
    found: dict[str, Source] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in _INFRASTRUCTURE or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        source = getattr(module, "SOURCE", None)
        if isinstance(source, Source):
            if source.name in found:
                raise RuntimeError(f"two modules declare source {source.name!r}")
            found[source.name] = source
    return found


def siblings(name: str) -> frozenset[str]:
    """The sources that sell the same offers as `name` from another endpoint: its primary and its fallbacks."""
    sources = all_sources()
    source = sources.get(name)
    primary = {source.fallback_for} if source is not None and source.fallback_for else set()
    return frozenset(primary | {s.name for s in sources.values() if s.fallback_for == name})


def get_source(name: str) -> Source:
    sources = all_sources()
    if name not in sources:
        raise UserInputError(f"unknown source {name!r}; known sources: {', '.join(sources)}")
    return sources[name]


def select_sources(names: list[str] | None) -> list[Source]:
    """Sources by source name or provider name (`aws` selects every AWS source); all when None."""
    sources = all_sources()
    if not names:
        return list(sources.values())
    chosen: dict[str, Source] = {}
    for name in names:
        matches = [s for s in sources.values() if name in (s.name, s.provider)]
        if not matches:
            providers = sorted({s.provider for s in sources.values()})
            raise UserInputError(
                f"unknown provider or source {name!r}; providers: {', '.join(providers)}; sources: {', '.join(sources)}"
            )
        chosen.update((s.name, s) for s in matches)
    return list(chosen.values())


def sources_table() -> str:
    """The README's sources table, as Markdown, from the registry (`gpucat sources --markdown`)."""
    from gpucat.scrapers._provenance import provenance_summary

    lines = ["| source | provider | endpoint hosts | API key | fixtures | what it loads |", "|---|---|---|---|---|---|"]
    for source in all_sources().values():
        if source.api_key_env:
            key = f"`{source.api_key_env}` " + ("required (skipped without it)" if source.api_key_required else "optional")
        else:
            key = "none"
        docs = f" ([docs]({source.docs_url}))" if source.docs_url else ""
        hosts = ", ".join(f"`{h}`" for h in sorted(source.hosts))
        fixtures = provenance_summary(source.provider, source.name)
        lines.append(f"| `{source.name}` | {source.provider} | {hosts} | {key} | {fixtures} | {source.description}{docs} |")
    return "\n".join(lines) + "\n"
