"""Numbers as people read them, shared by the terminal tables and the HTML report."""

from __future__ import annotations

import math
import re


def money(value: float | None) -> str:
    """Cents from $1 up; under $1 three significant digits (at least cents): 0.09, 0.456, 0.0045."""
    if value is None:
        return ""
    if value == 0 or abs(value) >= 1:
        return f"{value:,.2f}"
    decimals = max(2, 2 - math.floor(math.log10(abs(value))))
    whole, frac = f"{value:.{decimals}f}".split(".")
    return f"{whole}.{frac.rstrip('0').ljust(2, '0')}"


# Characters a terminal acts on instead of showing: C0/C1 controls (ESC starts the sequences that
# retitle a window or clear the screen), DEL, and the format characters that reorder text.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def printable(text: str) -> str:
    """`text` with every control character shown as its escape (`\\x1b`), never acted on."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def short_id(provider: str, offer_id: str) -> str:
    """A short, stable handle for one offer that a person can paste (`gpucat cost --explain 3f2c1a`):
    offer ids run to 40 characters ("NVIDIA GeForce RTX 4090/community/spot/1x"), too wide for a
    table that must keep its total at 80 columns."""
    import hashlib

    return hashlib.sha1(f"{provider}:{offer_id}".encode()).hexdigest()[:6]
