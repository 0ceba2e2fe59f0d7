"""How sure an estimate is: error bands per method and sharding class, from held-out evaluation.

`bench/memory_calibration.py --write-bands` writes `data/error_bands.json` from the
leave-one-source-out evaluation (`calibration.loso_results`): for each class, the 10th and 90th
percentile of the signed error (estimate - measured) / measured over the points of that class,
each estimated with constants fitted without the point's own source. A test checks the file
against a fresh evaluation, so it cannot drift from the estimator.

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
LOW_PERCENTILE, HIGH_PERCENTILE = 10, 90


def sharding_class(s: TrainSettings) -> str:
    """single (one GPU, or replicas that shard nothing), states (ZeRO-1/2 over several GPUs), or
    params (ZeRO-3/FSDP over several GPUs, or any parameter offload)."""
    if s.offload == "params" or (s.gpus > 1 and s.sharding in ("zero3", "fsdp")):
        return "params"
    if s.gpus > 1 and s.sharding in ("zero1", "zero2"):
        return "states"
    return "single"


def band_keys(s: TrainSettings) -> tuple[str, str, str]:
    """The keys to look a band up by, most specific first."""
    return f"{s.method}/{sharding_class(s)}", s.method, "all"


@cache
def load_bands() -> dict[str, dict[str, Any]]:
    path = resources.files("gpucat.memory").joinpath("data/error_bands.json")
    if not path.is_file():
        return {}
    return json.loads(path.read_text("utf-8"))["bands"]


def error_band(s: TrainSettings) -> dict[str, Any] | None:
    """The band for these settings: {"class", "n", "low", "high", "basis"}; None without a file."""
    bands = load_bands()
    for key in band_keys(s):
        band = bands.get(key)
        if band is not None and band["n"] >= MIN_POINTS:
            return {"class": key, **band}
    return None
