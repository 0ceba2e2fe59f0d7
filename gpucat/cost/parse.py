"""Command-line quantities: token counts ("200M"), durations ("30m", "7d") and sizes."""

from __future__ import annotations

import re

from gpucat.schemas.errors import UserInputError

_COUNT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([kKmMbBgGtT]?)\s*$")
_DURATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)?\s*$")
_MULTIPLIER = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_SECONDS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def token_count(text: str, flag: str = "--tokens") -> float:
    """'200M' -> 2e8; 'k', 'M', 'B' (or 'G'), 'T' suffixes; must be positive."""
    match = _COUNT.match(str(text))
    if not match:
        raise UserInputError(f"{flag} must be a number with an optional k/M/B/T suffix, got {text!r}")
    value = float(match[1]) * _MULTIPLIER[match[2].lower()]
    if value <= 0:
        raise UserInputError(f"{flag} must be positive, got {text!r}")
    return value


def duration_hours(text: str, flag: str, *, default_unit: str = "h", allow_zero: bool = False) -> float:
    """'30m' -> 0.5, '7d' -> 168, '2h' -> 2; a bare number is in `default_unit`."""
    match = _DURATION.match(str(text))
    if not match:
        raise UserInputError(f"{flag} must be a duration such as 30m, 2h or 7d, got {text!r}")
    hours = float(match[1]) * _SECONDS[match[2] or default_unit] / 3600
    if hours < 0 or (hours == 0 and not allow_zero):
        raise UserInputError(f"{flag} must be {'zero or more' if allow_zero else 'positive'}, got {text!r}")
    return hours
