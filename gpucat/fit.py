"""Which rented configurations can run a fine-tuning job: the memory estimate joined with the catalog.

For each GPU count N the run could use (1 only without sharding; 1, 2, 4, … up to `max_gpus`
with DDP, ZeRO or FSDP) the estimator gives the memory each GPU needs; the `fit_offers` macro
returns the offers where that fits: one instance with N GPUs, or identical instances joined by
a multi-node fabric. Each offer is kept at its smallest fitting N, ranked by the hourly price of
the whole configuration.

Each row says "fits" or "tight", decided against the estimate's error band (taken from the
leave-one-source-out evaluation, `MemoryEstimate.per_gpu_gb_low`/`_high`), by `risk`:

- "safe" (the default) avoids renting a card that runs out of memory: a configuration fits when
  the band's top fits the usable memory; it is tight when only the point estimate fits; it is
  left out when the point estimate does not fit.
- "likely" avoids passing over a card that would have done: it fits when the point estimate
  fits; it is tight when only the band's low end fits; left out below that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import duckdb

from gpucat.freshness import stale_sources
from gpucat.memory import MemoryEstimate, ModelArch, TrainSettings, per_gpu_need
from gpucat.memory.settings import quantity
from gpucat.schemas.errors import SettingError
from gpucat.warehouse.db import query_sql

GPU_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
RISKS = ("safe", "likely")


@dataclass(frozen=True)
class FitOptions:
    headroom: float = 0.1
    max_gpus: int = 64
    market: str | None = None
    providers: Sequence[str] = ()
    available_only: bool = False
    include_stale: bool = False
    limit: int = 30
    risk: str = "safe"  # see the module docstring


@dataclass(frozen=True)
class FitResult:
    estimates: dict[int, MemoryEstimate]
    rows: list[dict[str, Any]] = field(default_factory=list)
    # Sources past their freshness budget: left out unless include_stale (gpucat.freshness).
    stale_sources: list[dict[str, Any]] = field(default_factory=list)


def gpu_counts(settings: TrainSettings, max_gpus: int) -> tuple[int, ...]:
    if max_gpus < 1:
        raise SettingError("{q} must be at least 1, got {value}", q=quantity("max_gpus"), value=max_gpus)
    if settings.sharding == "none":
        return (1,)  # without data parallelism more GPUs do not change what one GPU holds
    return tuple(n for n in GPU_COUNTS if n <= max_gpus)


def fit(con: duckdb.DuckDBPyConnection, arch: ModelArch, settings: TrainSettings, options: FitOptions) -> FitResult:
    if not 0 <= options.headroom < 1:
        raise SettingError("{q} must be a fraction in [0, 1), got {value}", q=quantity("headroom"), value=options.headroom)
    if options.risk not in RISKS:
        raise SettingError("{q} must be one of {allowed}, got {value!r}", q=quantity("risk"), allowed=", ".join(RISKS), value=options.risk)
    estimates = per_gpu_need(arch, replace(settings, gpus=1), gpu_counts(settings, options.max_gpus))
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for n, estimate in sorted(estimates.items()):
        listed_from, _ = thresholds(estimate, options.risk)
        params = {
            "per_gpu_gb": listed_from,
            "gpus": n,
            "headroom": options.headroom,
            "providers": [p.lower() for p in options.providers],
            "market": options.market,
            "available_only": options.available_only,
            "include_stale": options.include_stale,
        }
        cursor = con.execute(query_sql("fit"), params)
        columns = [d[0] for d in cursor.description or []]
        for values in cursor.fetchall():
            row = dict(zip(columns, values, strict=True))
            key = (row["provider"], row["offer_id"])
            if key not in best:  # counts ascend: the first fit is the smallest configuration
                row["need_gb_per_gpu"] = estimate.per_gpu_gb
                row["fit"] = fit_status(row, estimate, options.risk)
                row["need_gb_per_gpu_low"] = estimate.per_gpu_gb_low
                row["need_gb_per_gpu_high"] = estimate.per_gpu_gb_high
                row["notes"] = notes(row, estimate, options.risk)
                best[key] = row
    rows = sorted(best.values(), key=lambda r: (r["usd_per_hour_total"], r["gpus_total"], r["provider"], r["offer_id"]))
    return FitResult(estimates=estimates, rows=rows[: options.limit], stale_sources=stale_sources(con))


def thresholds(estimate: MemoryEstimate, risk: str = "safe") -> tuple[float, float]:
    """(listed from, fits from): the per-GPU need an offer must hold to be listed at all, and to
    be a clean fit rather than tight. Without a band both are the point estimate."""
    point = estimate.per_gpu_gb
    if risk == "likely":
        return (estimate.per_gpu_gb_low if estimate.per_gpu_gb_low is not None else point), point
    return point, (estimate.per_gpu_gb_high if estimate.per_gpu_gb_high is not None else point)


def fit_status(row: dict[str, Any], estimate: MemoryEstimate, risk: str = "safe") -> str:
    """"fits" when the decision threshold (the band's top under "safe", the point estimate under
    "likely") is within the usable memory, else "tight" (the row is listed, so its lower
    threshold fits)."""
    _, fits_from = thresholds(estimate, risk)
    return "fits" if fits_from <= row["usable_gb_per_gpu"] else "tight"


def notes(row: dict[str, Any], estimate: MemoryEstimate, risk: str = "safe") -> list[str]:
    """What the user should know before renting this configuration for this job."""
    out = []
    if row.get("fit") == "tight":
        if risk == "likely":
            out.append(f"tight: estimate {estimate.per_gpu_gb:.1f} GB exceeds {row['usable_gb_per_gpu']:.1f} GB "
                       "usable; the error band's low end fits")
        else:
            out.append(f"tight: error band reaches {estimate.per_gpu_gb_high:.1f} GB, "
                       f"{row['usable_gb_per_gpu']:.1f} GB usable")
    if estimate.requires.get("bf16") and not row["gpu_bf16"]:
        out.append("no bf16 on this GPU: use --precision fp16-mixed or fp32")
    if estimate.requires.get("nf4") and not row["gpu_bnb_4bit"]:
        out.append("no bitsandbytes 4-bit kernels for this GPU")
    if row["nodes"] > 1:
        out.append(f"{row['nodes']} nodes over {row['fabric']}")
    if row["gpu_count"] < 1:
        out.append("fractional GPU slice")
    if row["availability"] == "unavailable":
        out.append("out of stock now")
    return out


def advice(settings: TrainSettings, max_gpus: int, *, more: Sequence[str] = ()) -> str:
    """What could make a job fit when nothing does, leaving out what the user already asked for."""
    tries = []
    if settings.sharding != "none" and max_gpus < GPU_COUNTS[-1]:
        tries.append("more GPUs (--max-gpus)")
    if settings.sharding in ("none", "ddp"):
        tries.append("sharding (--sharding fsdp)")
    if settings.method != "qlora":
        tries.append("--method qlora")
    if not settings.grad_checkpointing:
        tries.append("--grad-checkpointing")
    if settings.batch_size > 1:
        tries.append("a smaller --batch")
    tries.extend(more)
    return f"Try {', '.join(tries)}." if tries else "Even these settings need more memory than any current offer has."
