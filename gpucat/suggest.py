"""Unknown names end in one error line that suggests the nearest known names (did you mean …)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from gpucat.schemas.errors import UserInputError


def nearest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Known names close to `name`, compared case-insensitively, closest first."""
    by_lower = {k.lower(): k for k in known}
    lowered = name.lower()
    # A prefix or substring is what people usually mean ("h10" for H100, "lamb" for lambda).
    contained = [k for low, k in by_lower.items() if lowered and (low.startswith(lowered) or lowered in low)]
    close = [by_lower[m] for m in difflib.get_close_matches(lowered, list(by_lower), n=n, cutoff=0.6)]
    return list(dict.fromkeys([*close, *sorted(contained, key=len)]))[:n]


def unknown_message(kind: str, name: str, known: Iterable[str], *, show_all: bool = False) -> str:
    known = sorted(set(known))
    hint = nearest(name, known)
    message = f"unknown {kind} {name!r}"
    if hint:
        message += f"; did you mean {' or '.join(repr(h) for h in hint)}?"
    if show_all or not hint:
        message += f" (known: {', '.join(known)})" if len(known) <= 40 else ""
    return message


def check_names(kind: str, names: Iterable[str], known: Iterable[str], *, show_all: bool = False) -> None:
    """Raise UserInputError for the first name (case-insensitive) that is not known."""
    known = list(known)
    lowered = {k.lower() for k in known}
    for name in names:
        if name.lower() not in lowered:
            raise UserInputError(unknown_message(kind, name, known, show_all=show_all))


def check_providers(names: Iterable[str]) -> None:
    names = list(names)
    if not names:  # nothing to check: spare a read command importing every scraper (and bs4)
        return
    from gpucat.scrapers import all_sources

    offering = {s.provider for s in all_sources().values() if "offers" in s.tables}
    check_names("provider", names, offering, show_all=True)


def check_sources_or_providers(names: Iterable[str]) -> None:
    from gpucat.scrapers import all_sources

    sources = all_sources().values()
    check_names("provider or source", names, {s.provider for s in sources} | {s.name for s in sources})
