"""The calibration set: measured peak-memory points, compared with the estimator and naive rules.

Each point (gpucat/memory/data/calibration_points.json) carries the settings of the run it
was measured on and the metric its source used. Comparisons convert the estimate to that
metric, never the measurement to ours:

- allocated / active: `torch.cuda.max_memory_allocated` or the active-bytes peak, i.e. the
  tensors alone: no CUDA context, no allocator margin, no paged (unified-memory) optimizer state.
- reserved: the above plus the allocator margin.
- nvidia-smi: everything, with the source's own measured CUDA context when it gives one.

Units are converted to GB (10^9 bytes) on load. The same `estimate_memory` path as the CLI is
used, with the arch looked up in the shipped table.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any

from gpucat.memory.archs import ModelArch, get_model_arch
from gpucat.memory.estimator import CUDA_CONTEXT_GB, MemoryEstimate, estimate_memory
from gpucat.memory.settings import TrainSettings

UNIT_TO_GB = {"GB": 1.0, "GiB": 2**30 / 1e9, "MiB": 2**20 / 1e9}
METRICS = ("allocated", "active", "reserved", "nvidia-smi")
AIM_MEDIAN_ABS_ERROR = 0.15
AIM_MAX_ABS_ERROR = 0.35


@dataclass(frozen=True)
class CalibrationPoint:
    id: str
    ref: str  # row or section in the reference's calibration set
    group: str
    label: str
    model: str  # alias in model_archs
    settings: TrainSettings
    metric: str
    measured_gb: float | None  # None for an out-of-memory point
    oom_above_gb: float | None  # the card it ran out of memory on
    context_gb: float | None  # CUDA context measured by the source, for nvidia-smi points
    exclude: str | None  # why the point is not held to the aim
    source: str
    note: str = ""
    training_run: bool = True  # False for reference measurements (context alone, weights alone)


_SETTING_NAMES = {f.name for f in fields(TrainSettings)}


def _settings(raw: dict[str, Any], where: str) -> TrainSettings:
    unknown = set(raw) - _SETTING_NAMES
    if unknown:
        raise ValueError(f"{where}: unknown settings {sorted(unknown)}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    return TrainSettings(**values)


def load_points() -> tuple[CalibrationPoint, ...]:
    """Every measured point in the calibration file, excluded ones included."""
    text = resources.files("gpucat.memory").joinpath("data/calibration_points.json").read_text("utf-8")
    points = []
    for group in json.loads(text)["groups"]:
        for p in group["points"]:
            metric = p.get("metric", group["metric"])
            unit = p.get("unit", group["unit"])
            if metric not in METRICS or unit not in UNIT_TO_GB:
                raise ValueError(f"{p['id']}: bad metric {metric!r} or unit {unit!r}")
            measured = p.get("measured")
            points.append(CalibrationPoint(
                id=p["id"], ref=p["ref"], group=group["id"], label=p["label"],
                model=p.get("model", group["model"]),
                settings=_settings({**group["settings"], **p.get("settings", {})}, p["id"]),
                metric=metric,
                measured_gb=None if measured is None else measured * UNIT_TO_GB[unit],
                oom_above_gb=p.get("oom_above_gb"),
                context_gb=p.get("context_gb", group.get("context_gb")),
                exclude=p.get("exclude"),
                source=group["source"],
                note=p.get("note", ""),
                training_run=p.get("training_run", True),
            ))
    return tuple(points)


def estimate_in_metric(point: CalibrationPoint, estimate: MemoryEstimate) -> float:
    """The estimate expressed in the point's metric, in GB."""
    if point.metric in ("allocated", "active"):
        return estimate.torch_allocated_gb()
    if point.metric == "reserved":
        return estimate.torch_reserved_gb()
    context = point.context_gb if point.context_gb is not None else CUDA_CONTEXT_GB
    return estimate.per_gpu_gb - CUDA_CONTEXT_GB + context


# --- naive rules --------------------------------------------------------------------------


def llama_factory_rule_gb(arch: ModelArch, settings: TrainSettings) -> float:
    """LLaMA-Factory README's table: 18x / 8x / 2x / x / x/2 GB for an x-billion-parameter model."""
    billions = arch.params / 1e9
    if settings.method == "full":
        return (8 if settings.precision == "bf16-true" else 18) * billions
    if settings.method == "lora":
        return 2 * billions
    return (1 if settings.quant == "int8" else 0.5) * billions


def accelerate_rule_gb(arch: ModelArch, settings: TrainSettings) -> float | None:
    """`accelerate estimate-memory`'s "Training using Adam": the largest of its per-stage sizes,
    i.e. 4x the fp32 model for float32 and 2x for float16/bfloat16. It has no LoRA/QLoRA answer."""
    if settings.method != "full":
        return None
    fp32_bytes = 4 * arch.params
    return (4 if settings.precision == "fp32" else 2) * fp32_bytes / 1e9


NAIVE_RULES = {"llama-factory": llama_factory_rule_gb, "accelerate": accelerate_rule_gb}


# --- evaluation ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PointResult:
    point: CalibrationPoint
    estimate: MemoryEstimate
    estimated_gb: float  # in the point's metric
    error: float | None  # (estimated - measured) / measured; None for out-of-memory points
    naive_gb: dict[str, float | None]
    naive_error: dict[str, float | None]

    @property
    def oom_predicted(self) -> bool | None:
        """For an out-of-memory point: does the estimate exceed the card?"""
        if self.point.oom_above_gb is None:
            return None
        return self.estimate.per_gpu_gb > self.point.oom_above_gb


def evaluate_point(point: CalibrationPoint) -> PointResult:
    arch = get_model_arch(point.model)
    estimate = estimate_memory(arch, point.settings)
    estimated = estimate_in_metric(point, estimate)
    measured = point.measured_gb
    naive = {name: rule(arch, point.settings) for name, rule in NAIVE_RULES.items()}
    return PointResult(
        point=point,
        estimate=estimate,
        estimated_gb=estimated,
        error=None if measured is None else (estimated - measured) / measured,
        naive_gb=naive,
        naive_error={name: None if v is None or measured is None else (v - measured) / measured
                     for name, v in naive.items()},
    )


def evaluate(points: tuple[CalibrationPoint, ...] | None = None) -> list[PointResult]:
    return [evaluate_point(p) for p in (points if points is not None else load_points())]


@dataclass(frozen=True)
class Summary:
    count: int
    median_abs_error: float
    max_abs_error: float
    within_35: int

    @property
    def meets_aim(self) -> bool:
        return self.median_abs_error <= AIM_MEDIAN_ABS_ERROR and self.max_abs_error <= AIM_MAX_ABS_ERROR


def summarize(errors: list[float | None]) -> Summary:
    values = [abs(e) for e in errors if e is not None]
    if not values:
        return Summary(0, float("nan"), float("nan"), 0)
    return Summary(len(values), statistics.median(values), max(values),
                   sum(1 for v in values if v <= AIM_MAX_ABS_ERROR))


def held_to_aim(results: list[PointResult]) -> list[PointResult]:
    """Measured (not out-of-memory) points that are not excluded."""
    return [r for r in results if r.point.exclude is None and r.error is not None]


def with_settings(point: CalibrationPoint, **changes: Any) -> CalibrationPoint:
    return replace(point, settings=replace(point.settings, **changes))
