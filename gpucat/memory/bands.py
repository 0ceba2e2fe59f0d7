"""How sure an estimate is: error bands per method and sharding class, from held-out evaluation.

`bench/memory_calibration.py --write-bands` writes `data/error_bands.json` from the
leave-one-source-out evaluation (`calibration.loso_results`): for each class, the low and high
percentile of the signed error (estimate - measured) / measured over the points of that class
(5th and 95th: about 80% of each method's held-out measurements then fall inside, the bench shows),
each estimated with constants fitted without the point's own source. A test checks the file
against a fresh evaluation, so it cannot drift from the estimator.

The band of an estimate E is [E / (1 + max(high, 0)), E / (1 + min(low, 0))]: the measured peaks
that those percentiles allow, widened where needed so that E itself is inside (a class whose
held-out errors are all negative still has E as its lower end). About 80% of a class's held-out
measurements fall inside; the bench prints the share per method.

A class with fewer than MIN_POINTS held-out points falls back to its method's band, then to
the band over every point.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpucat.memory.settings import TrainSettings

MIN_POINTS = 5
LOW_PERCENTILE, HIGH_PERCENTILE = 5, 95


def sharding_class(s: TrainSettings) -> str:
    """single (one GPU, or replicas that shard nothing), states (ZeRO-1/2 over several GPUs),
    params (ZeRO-3/FSDP over several GPUs) or offload (any state offloaded to host RAM)."""
    if s.offload != "none":
        return "offload"
    if s.gpus > 1 and s.sharding in ("zero3", "fsdp"):
        return "params"
    if s.gpus > 1 and s.sharding in ("zero1", "zero2"):
        return "states"
    return "single"


def band_keys(s: TrainSettings) -> tuple[str, str, str]:
    """The keys to look a band up by, most specific first."""
    return f"{s.method}/{sharding_class(s)}", s.method, "all"


def error_limits(band: dict[str, Any]) -> tuple[float, float]:
    """The signed errors a band admits, always including 0 (the estimate itself)."""
    return min(band["low"], 0.0), max(band["high"], 0.0)


def band_gb(estimate_gb: float, band: dict[str, Any]) -> tuple[float, float]:
    """(low, high) measured peaks a band allows for an estimate: low <= estimate <= high."""
    err_low, err_high = error_limits(band)
    return estimate_gb / (1 + err_high), estimate_gb / (1 + err_low)


def band_meaning(band: dict[str, Any], coverage: float | None) -> str:
    share = f"{coverage:.0%} of" if coverage is not None else "most"
    return (f"where the measured peak of a run like this is likely to lie: the estimate over (1 + the "
            f"{LOW_PERCENTILE}th..{HIGH_PERCENTILE}th percentile of the leave-one-source-out error of "
            f"{band['n']} calibration runs of class {band['class']}, {band['low']:+.0%} .. {band['high']:+.0%}), "
            f"widened to contain the estimate; {share} the held-out {band['class'].split('/')[0]} runs fell "
            "inside such bands. Same metric as per_gpu_gb (nvidia-smi view).")


@cache
def _bands_file() -> dict[str, Any]:
    path = resources.files("gpucat.memory").joinpath("data/error_bands.json")
    if not path.is_file():
        return {}
    return json.loads(path.read_text("utf-8"))


def load_bands() -> dict[str, dict[str, Any]]:
    return _bands_file().get("bands", {})


def load_coverage() -> dict[str, float]:
    """Per method: the share of held points inside their band (written with the bands)."""
    return _bands_file().get("coverage", {})


def pick_band(bands: dict[str, dict[str, Any]], s: TrainSettings) -> dict[str, Any] | None:
    """The most specific band with enough points: {"class", "n", "low", "high", ...}."""
    for key in band_keys(s):
        band = bands.get(key)
        if band is not None and band["n"] >= MIN_POINTS:
            return {"class": key, **band}
    return None


def error_band(s: TrainSettings) -> dict[str, Any] | None:
    """The shipped band for these settings, with what it means; None without a file."""
    band = pick_band(load_bands(), s)
    if band is not None:
        band["meaning"] = band_meaning(band, load_coverage().get(s.method))
    return band
