"""Units, one convention: GB = 10^9 bytes, USD, seconds; conversions for what providers publish."""

from __future__ import annotations

BYTES_PER_GB = 10**9
BYTES_PER_GIB = 2**30
BYTES_PER_MIB = 2**20
# Cloud providers price storage per month as 730 hours (8,760 / 12).
HOURS_PER_MONTH = 730.0
SECONDS_PER_HOUR = 3600


def gb_from_gib(gib: float) -> float:
    """GiB (2^30 bytes) to GB (10^9 bytes), rounded to 1e-3 GB."""
    return round(gib * BYTES_PER_GIB / BYTES_PER_GB, 3)


def gb_from_mib(mib: float) -> float:
    """MiB (2^20 bytes) to GB (10^9 bytes), rounded to 1e-3 GB."""
    return round(mib * BYTES_PER_MIB / BYTES_PER_GB, 3)
