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
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any

from gpucat.memory.archs import ModelArch, get_model_arch
from gpucat.memory.bands import HIGH_PERCENTILE, LOW_PERCENTILE, band_keys, error_limits, pick_band
from gpucat.memory.estimator import (
    CUDA_CONTEXT_GB,
    FITTED,
    NCCL_GB,
    FittedConstants,
    MemoryEstimate,
    estimate_memory,
)
from gpucat.memory.settings import TrainSettings

UNIT_TO_GB = {"GB": 1.0, "GiB": 2**30 / 1e9, "MiB": 2**20 / 1e9}
METRICS = ("allocated", "active", "reserved", "nvidia-smi")
AIM_MEDIAN_ABS_ERROR = 0.15
AIM_MAX_ABS_ERROR = 0.35


@dataclass(frozen=True)
class CalibrationPoint:
    id: str
    ref: str  # row or section in the reference's calibration set
    group: str  # the publication it comes from: the unit held out in leave-one-source-out
    toolchain: str  # the software that ran it (several publications can share one)
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
    # True for sources added after the estimator's mechanisms were written: out of sample for its
    # structure too, not only for its fitted constants.
    unseen_by_design: bool = False


_SETTING_NAMES = {f.name for f in fields(TrainSettings)}


def _settings(raw: dict[str, Any], where: str) -> TrainSettings:
    unknown = set(raw) - _SETTING_NAMES
    if unknown:
        raise ValueError(f"{where}: unknown settings {sorted(unknown)}")
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
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
                id=p["id"], ref=p["ref"], group=group["id"], toolchain=group["toolchain"], label=p["label"],
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
                unseen_by_design=group.get("unseen_by_design", False),
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


def evaluate_point(point: CalibrationPoint, fitted: FittedConstants = FITTED) -> PointResult:
    arch = get_model_arch(point.model)
    estimate = estimate_memory(arch, point.settings, fitted, with_band=False)
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


def evaluate(
    points: tuple[CalibrationPoint, ...] | None = None, fitted: FittedConstants = FITTED
) -> list[PointResult]:
    return [evaluate_point(p, fitted) for p in (points if points is not None else load_points())]


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


# --- fitting and out-of-sample evaluation -------------------------------------------------


def is_held(point: CalibrationPoint) -> bool:
    """A measured training run that is held to the aim (not excluded, not out-of-memory)."""
    return point.exclude is None and point.measured_gb is not None and point.training_run


def margin_fit_points(points: tuple[CalibrationPoint, ...]) -> tuple[CalibrationPoint, ...]:
    """The points the allocator margin is fitted on: held points measured as reserved memory
    (the only metric that isolates the allocator's share)."""
    return tuple(p for p in points if is_held(p) and p.metric == "reserved")


def overhead_fit_points(points: tuple[CalibrationPoint, ...]) -> tuple[CalibrationPoint, ...]:
    """The points the activation overhead is fitted on: held points whose metric leaves the
    allocator out (allocated, active), so the fit does not depend on the allocator margin."""
    return tuple(p for p in points if is_held(p) and p.metric in ("allocated", "active"))


def _zero_median(fit_on: tuple[CalibrationPoint, ...], make: Any, lo: float, hi: float) -> float:
    """The value in [lo, hi] where the median signed error over `fit_on` is zero (bisection: the
    error grows with the value), rounded to 0.01."""

    def median_error(value: float) -> float:
        return statistics.median(r.error for r in evaluate(fit_on, make(value)) if r.error is not None)

    if median_error(lo) >= 0:
        return lo
    if median_error(hi) <= 0:
        return hi
    for _ in range(12):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if median_error(mid) < 0 else (lo, mid)
    return round((lo + hi) / 2, 2)


def fit_activation_overhead(points: tuple[CalibrationPoint, ...]) -> float:
    """The activation overhead where the median signed error over the points measured without
    the allocator margin is zero; the shipped value if there are none."""
    fit_on = overhead_fit_points(points)
    if not fit_on:
        return FITTED.activation_overhead
    return _zero_median(fit_on, lambda k: replace(FITTED, activation_overhead=k), 1.0, 2.0)


def fit_allocator_margin(points: tuple[CalibrationPoint, ...], activation_overhead: float | None = None) -> float:
    """The allocator margin where the median signed error over the reserved points is zero, with
    the activation overhead fitted on the same points' sources (or the one given); the shipped
    value if there are no reserved points."""
    fit_on = margin_fit_points(points)
    if not fit_on:
        return FITTED.allocator_margin
    k = fit_activation_overhead(points) if activation_overhead is None else activation_overhead
    return _zero_median(fit_on, lambda m: FittedConstants(allocator_margin=m, activation_overhead=k), 0.0, 1.0)


def fit_constants(points: tuple[CalibrationPoint, ...]) -> FittedConstants:
    k = fit_activation_overhead(points)
    return FittedConstants(allocator_margin=fit_allocator_margin(points, k), activation_overhead=k)


@dataclass(frozen=True)
class ConstantReport:
    name: str
    value: float
    fitted_on: tuple[str, ...]  # point ids; empty for constants set from the literature
    basis: str


def constants_report(points: tuple[CalibrationPoint, ...]) -> list[ConstantReport]:
    """Every constant of the estimator, with the points it was fitted on (or where it comes from)."""
    return [
        ConstantReport("activation_overhead", FITTED.activation_overhead,
                       tuple(p.id for p in overhead_fit_points(points)),
                       f"median signed error zero over the allocated and active points (refit on "
                       f"all of them: {fit_activation_overhead(points):.2f})"),
        ConstantReport("allocator_margin", FITTED.allocator_margin,
                       tuple(p.id for p in margin_fit_points(points)),
                       f"median signed error zero over the reserved points, given the overhead (refit on all "
                       f"of them: {fit_allocator_margin(points):.2f})"),
        ConstantReport("cuda_context_gb", CUDA_CONTEXT_GB, (), "not fitted: PyTorch >= 1.13 lazy loading, "
                       "0.3-0.5 GB (pytorch/pytorch PR #86509, issues #107667, #109888)"),
        ConstantReport("nccl_gb", NCCL_GB, (), "not fitted: a heuristic for NCCL buffers (unsourced)"),
    ]


def loso_results(
    points: tuple[CalibrationPoint, ...] | None = None, key: str = "group"
) -> tuple[list[PointResult], dict[str, FittedConstants]]:
    """Each source (`key`: "group" = publication, or "toolchain") held out in turn: its points are
    estimated with constants fitted on every other source's points only."""
    points = points if points is not None else load_points()
    results: dict[str, PointResult] = {}
    fitted_without: dict[str, FittedConstants] = {}
    for source in sorted({getattr(p, key) for p in points}):
        rest = tuple(p for p in points if getattr(p, key) != source)
        fitted_without[source] = fit_constants(rest)
        for p in points:
            if getattr(p, key) == source:
                results[p.id] = evaluate_point(p, fitted_without[source])
    return [results[p.id] for p in points], fitted_without


def within(errors: list[float | None], bound: float) -> int:
    return sum(1 for e in errors if e is not None and abs(e) <= bound)


def _percentile(values: list[float], pct: int) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def compute_bands(results: list[PointResult]) -> dict[str, dict[str, Any]]:
    """Error bands per class (see gpucat.memory.bands) from held-out results of held points."""
    by_key: dict[str, list[float]] = {}
    for r in results:
        if r.error is None or not is_held(r.point):
            continue
        for k in band_keys(r.point.settings):
            by_key.setdefault(k, []).append(r.error)
    return {
        k: {"n": len(errs), "low": round(_percentile(errs, LOW_PERCENTILE), 3),
            "high": round(_percentile(errs, HIGH_PERCENTILE), 3),
            "median_abs": round(statistics.median(abs(e) for e in errs), 3)}
        for k, errs in sorted(by_key.items())
    }


# --- direction and band coverage ------------------------------------------------------------


@dataclass(frozen=True)
class Direction:
    count: int
    median_signed_error: float
    under: int  # estimates below the measurement

    @property
    def under_share(self) -> float:
        return self.under / self.count if self.count else float("nan")


def direction(errors: list[float | None]) -> Direction:
    values = [e for e in errors if e is not None]
    if not values:
        return Direction(0, float("nan"), 0)
    return Direction(len(values), statistics.median(values), sum(1 for e in values if e < 0))


def inside_band(result: PointResult, bands: dict[str, dict[str, Any]]) -> bool | None:
    """Whether the measurement lies in the band of its estimate (None without error or band)."""
    band = pick_band(bands, result.point.settings)
    if result.error is None or band is None:
        return None
    low, high = error_limits(band)
    return low <= result.error <= high


def band_coverage(results: list[PointResult], bands: dict[str, dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per method and overall ("all"): (held points inside their band, held points)."""
    return _coverage((r, bands) for r in results)


def _coverage(judged: Iterable[tuple[PointResult, dict[str, dict[str, Any]]]]) -> dict[str, tuple[int, int]]:
    """Each point judged by its own bands: per method and "all", (held points inside, held points)."""
    out: dict[str, list[int]] = {}
    for r, bands in judged:
        inside = inside_band(r, bands) if is_held(r.point) else None
        if inside is None:
            continue
        for key in (r.point.settings.method, "all"):
            counts = out.setdefault(key, [0, 0])
            counts[0] += inside
            counts[1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def held_out_band_coverage(results: list[PointResult]) -> dict[str, tuple[int, int]]:
    """Band coverage where each source's points are judged by bands computed without that source:
    what a new publication would see."""
    judged: list[tuple[PointResult, dict[str, dict[str, Any]]]] = []
    for source in sorted({r.point.group for r in results}):
        bands = compute_bands([r for r in results if r.point.group != source])
        judged += [(r, bands) for r in results if r.point.group == source]
    return _coverage(judged)
