"""Numbers as people read them, shared by the terminal tables and the HTML report."""

from __future__ import annotations

import math


def money(value: float | None) -> str:
    """Cents from $1 up; under $1 three significant digits (at least cents): 0.09, 0.456, 0.0045."""
    if value is None:
        return ""
    if value == 0 or abs(value) >= 1:
        return f"{value:,.2f}"
    decimals = max(2, 2 - math.floor(math.log10(abs(value))))
    whole, frac = f"{value:.{decimals}f}".split(".")
    return f"{whole}.{frac.rstrip('0').ljust(2, '0')}"
