"""The time model against published throughputs: load the points, estimate each, fit the constants,
and test them leave-one-source-out (LOSO).

`data/throughput_points.json` holds measured tokens/s per GPU with the settings of each run and its
source. A point with `exclude` is shown with its reason and held to no aim. LOSO: for every source,
the constants are fitted on the points of all other sources and the source's own points are
estimated with them; a GPU family seen only in the left-out source then falls back as it would for
a card never measured. `bench/cost_calibration.py` prints the comparison and, with `--fit`, refits
the constants on every point and writes them with the LOSO error band.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

from gpucat.cost.throughput import (
    Factors,
    Hardware,
    ModelShape,
    TimeTerms,
    Workload,
    _bytes_per_flop,
    model_shape,
    seconds_per_token,
    throughput,
    time_terms,
)  # fmt: skip
from gpucat.memory import TrainSettings, get_model_arch
from gpucat.schemas.reference import GPU_MODELS_CSV

AIM = 0.35  # estimates within +-35% of the measurement
BAND = (0.2, 0.8)  # quantiles of measured/estimated over the LOSO estimates: the likely range shown by `cost`
# Weak priors, so that a fold with few QLoRA, small-batch or multi-GPU points does not send a
# constant anywhere: (default, weight on its squared log-ratio). The dequantization default is the
# physical 2.5 B (read 0.5, write 2); 5 us is an eager kernel launch; overlap 0.5 is the midpoint:
# without it, overlap and the cards' utilization trade off along a flat valley.
# Matmul-only benchmarks reach 80-87% of the dense peak (stas00/ml-engineering MAMF, shared/reference
# finetune-memory.md section 4): no card sustains more across a whole training step.
MAX_UTILIZATION = 0.85
PRIORS = {"dequant_bytes_per_param": (2.5, 0.5), "host_s_per_kernel": (5e-6, 0.5), "overlap": (0.5, 0.5)}


DEFAULT_START = Factors(utilization={}, adapter=0.8, overlap=0.5)


@dataclass(frozen=True)
class Point:
    id: str
    group: str
    label: str
    source: str  # the repository: the unit left out by LOSO
    framework: str
    measured: float  # tokens/s per GPU
    shape: ModelShape
    settings: TrainSettings
    hardware: Hardware
    added_after_mechanisms: bool = False
    assumed: tuple[str, ...] = ()
    workload: Workload | None = None
    exclude: str | None = None
    role: str = "held"


@dataclass(frozen=True)
class PointResult:
    point: Point
    estimated: float
    error: float  # estimated / measured - 1


@dataclass(frozen=True)
class Summary:
    count: int
    median_abs_error: float
    max_abs_error: float
    within_aim: int
    signed_median: float = 0.0


def gpu_rows() -> dict[str, dict[str, str]]:
    with GPU_MODELS_CSV.open(newline="", encoding="utf-8") as fh:
        return {row["gpu_model"]: row for row in csv.DictReader(fh)}


def _number(value: str) -> float | None:
    return float(value) if value else None


def peak_tflops(row: dict[str, str], precision: str) -> float | None:
    return _number(row["fp16_tflops"] if precision == "fp16-mixed" else row["bf16_tflops"] or row["fp16_tflops"])


def hardware_for(gpu_model: str, precision: str, **config: Any) -> Hardware:
    row = gpu_rows()[gpu_model]
    peak = peak_tflops(row, precision)
    if peak is None:
        raise ValueError(f"{gpu_model} has no TFLOPS figure")
    return Hardware(
        gpu_model=gpu_model, family=row["family"], architecture=row["architecture"], peak_tflops=peak,
        memory_bandwidth_gbps=_number(row["memory_bandwidth_gbps"]), nvlink_gbps=_number(row["nvlink_gbps"]), **config,
    )  # fmt: skip


def _shape(raw: dict[str, Any]) -> ModelShape:
    s = raw["shape"]
    return ModelShape(
        matmul_params=s["matmul_params"], layers=s["layers"], attn_dim=s["attn_dim"],
        params=s.get("params", s["matmul_params"]), trainable_params=s.get("trainable_params", s["matmul_params"]),
        quantized_params=s.get("quantized_params", 0), vocab_size=s.get("vocab_size", 0),
        adapted_linears=s.get("adapted_linears", 0), adapted_io=s.get("adapted_io", 0),
    )  # fmt: skip


def _point(group: dict[str, Any], raw: dict[str, Any]) -> Point:
    values = {**group.get("settings", {}), **raw.get("settings", {})}
    gpus = values.pop("gpus", 1)
    nodes = values.pop("nodes", max(1, gpus // group.get("gpus_per_node", 8)))
    attention_len = values.pop("attention_len", None)
    fused_kernels = values.pop("fused_kernels", False)
    if isinstance(values.get("lora_targets"), list):
        values["lora_targets"] = tuple(values["lora_targets"])
    settings = TrainSettings(**values, gpus=gpus)
    shape = _shape(raw) if "shape" in raw else model_shape(get_model_arch(raw.get("model") or group["model"]), settings)
    fabric_gbps = group.get("fabric_gbps")
    assumed = list(group.get("assumed_group", [])) + list(raw.get("assumed", []))
    if nodes > 1 and fabric_gbps is None and group.get("fabric_gbps_assumed"):
        fabric_gbps = group["fabric_gbps_assumed"]
        assumed.append(f"node fabric not stated: {fabric_gbps:g} Gbit/s per node assumed (8 x 400 Gb/s, an HGX training cluster)")
    config = dict(gpus=gpus, nodes=nodes, interconnect=group.get("interconnect"), fabric=group.get("fabric"),
                  fabric_gbps=fabric_gbps)  # fmt: skip
    try:
        hardware = hardware_for(group["gpu_model"], settings.precision, **config)
    except ValueError:
        if not raw.get("exclude"):
            raise
        row = gpu_rows()[group["gpu_model"]]
        hardware = Hardware(group["gpu_model"], row["family"], row["architecture"], 0.0, **config)
    return Point(
        id=raw["id"], group=group["id"], label=raw["label"], source=group["source"].split()[0],
        framework=group.get("framework", group["source"].split()[0]), measured=float(raw["measured"]), shape=shape,
        settings=settings, hardware=hardware, added_after_mechanisms=bool(raw.get("added_after_mechanisms", group.get("added_after_mechanisms"))),
        assumed=tuple(assumed),
        workload=Workload(attention_len=attention_len, fused_kernels=fused_kernels) if attention_len or fused_kernels else None,
        exclude=raw.get("exclude"),
        role=raw.get("role", "held"),
    )  # fmt: skip


def load_points() -> list[Point]:
    text = resources.files("gpucat.cost").joinpath("data/throughput_points.json").read_text()
    return [_point(group, raw) for group in json.loads(text)["groups"] for raw in group["points"]]


def usable(points: Sequence[Point]) -> list[Point]:
    return [p for p in points if not p.exclude]


def evaluate(points: Sequence[Point], factors: Factors) -> list[PointResult]:
    out = []
    for p in usable(points):
        estimated = throughput(p.shape, p.settings, p.hardware, factors, p.workload).tokens_per_s_per_gpu
        out.append(PointResult(p, estimated, estimated / p.measured - 1))
    return out


def summarize(results: Sequence[PointResult]) -> Summary:
    errors = [abs(r.error) for r in results]
    if not errors:
        return Summary(0, 0.0, 0.0, 0)
    return Summary(len(errors), statistics.median(errors), max(errors), sum(e <= AIM for e in errors),
                   statistics.median(r.error for r in results))  # fmt: skip


# --- fitting -------------------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(-50.0, min(50.0, x))))


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _unpack(x: Sequence[float], families: dict[str, str], ratios: dict[str, float], fitted_on: tuple[str, ...]) -> Factors:
    n = len(families)
    return Factors(
        utilization={f: MAX_UTILIZATION * _sigmoid(v) for f, v in zip(families, x[:n], strict=True)},
        adapter=math.exp(x[n]),
        overlap=_sigmoid(x[n + 1]),
        dequant_bytes_per_param=math.exp(x[n + 2]),
        host_s_per_kernel=math.exp(x[n + 3]) * 1e-6,
        attention_efficiency=_sigmoid(x[n + 4]),
        families=dict(families),
        bytes_per_flop=dict(ratios),
        fitted_on=fitted_on,
    )


def _prepared(points: Sequence[Point]) -> list[tuple[Point, TimeTerms]]:
    return [(p, time_terms(p.shape, p.settings, p.hardware, p.workload)) for p in points]


def fast_estimate(point: Point, terms: TimeTerms, factors: Factors) -> float:
    """tokens/s per GPU from precomputed terms (what `throughput` returns, without its notes)."""
    utilization, _ = factors.for_gpu(point.hardware)
    return 1 / sum(seconds_per_token(terms, utilization, factors).values())


def fit(points: Sequence[Point], start: Factors | None = None) -> Factors:
    """Least squares on log(estimate / measurement) over the usable points (Nelder-Mead), with
    weak priors on the dequantization bytes and host seconds per kernel."""
    chosen = usable(points)
    prepared = _prepared(chosen)
    families = {p.hardware.family: p.hardware.architecture for p in sorted(chosen, key=lambda p: p.hardware.family)}
    by_family: dict[str, list[float]] = {}
    for p in chosen:
        by_family.setdefault(p.hardware.family, []).append(_bytes_per_flop(p.hardware) or 0.0)
    ratios = {family: statistics.median(values) for family, values in by_family.items()}  # a family's cards may differ (A100 40/80 GB)
    fitted_on = tuple(p.id for p in chosen)
    start = start or DEFAULT_START
    x0 = [_logit(min(0.9, max(0.1, start.utilization.get(f, 0.4) / MAX_UTILIZATION))) for f in families]
    x0 += [math.log(start.adapter), _logit(min(0.95, max(0.05, start.overlap))),
           math.log(start.dequant_bytes_per_param), math.log(max(start.host_s_per_kernel, 1e-7) * 1e6),
           _logit(min(0.95, max(0.05, start.attention_efficiency)))]  # fmt: skip

    def loss(x: Sequence[float]) -> float:
        factors = _unpack(x, families, ratios, fitted_on)
        total = sum(math.log(fast_estimate(p, t, factors) / p.measured) ** 2 for p, t in prepared)
        for name, (default, weight) in PRIORS.items():
            total += weight * math.log(getattr(factors, name) / default) ** 2
        return total

    best = nelder_mead(loss, x0)
    best = nelder_mead(loss, best)  # a restart from the best vertex: the simplex often stalls on flat directions
    return _unpack(best, families, ratios, fitted_on)


def loso(points: Sequence[Point], start: Factors | None = None) -> list[PointResult]:
    """Each source's points estimated with constants fitted on every other source."""
    chosen = usable(points)
    out: list[PointResult] = []
    for source in sorted({p.source for p in chosen}):
        factors = fit([p for p in chosen if p.source != source], start)
        for p, terms in _prepared([p for p in chosen if p.source == source]):
            estimated = fast_estimate(p, terms, factors)
            out.append(PointResult(p, estimated, estimated / p.measured - 1))
    return out


def error_band(results: Sequence[PointResult]) -> tuple[float, float]:
    """The BAND quantiles of measured / estimated: multiply an estimate's hours by them."""
    ratios = sorted(1 / (1 + r.error) for r in results)
    if not ratios:
        return 1.0, 1.0
    cuts = statistics.quantiles(ratios, n=100, method="inclusive")
    return cuts[round(BAND[0] * 100) - 1], cuts[round(BAND[1] * 100) - 1]


def nelder_mead(f: Callable[[Sequence[float]], float], x0: Sequence[float], *, step: float = 0.5,
                iterations: int = 4000, tolerance: float = 1e-9) -> list[float]:  # fmt: skip
    simplex = [list(x0)] + [[v + (step if i == j else 0.0) for j, v in enumerate(x0)] for i in range(len(x0))]
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = sorted(range(len(simplex)), key=values.__getitem__)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if values[-1] - values[0] < tolerance:
            break
        centroid = [sum(col) / (len(simplex) - 1) for col in zip(*simplex[:-1], strict=True)]

        def toward(t: float) -> list[float]:
            return [c + t * (w - c) for c, w in zip(centroid, simplex[-1], strict=True)]

        reflected = toward(-1.0)
        fr = f(reflected)
        if fr < values[0]:
            expanded = toward(-2.0)
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = toward(0.5)
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                simplex = [simplex[0]] + [[b + 0.5 * (v - b) for b, v in zip(simplex[0], x, strict=True)] for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    return simplex[min(range(len(simplex)), key=values.__getitem__)]


def factors_dict(factors: Factors, band: tuple[float, float] | None = None) -> dict[str, Any]:
    low, high = band or factors.error_band
    return {
        "about": "Fitted by `uv run python bench/cost_calibration.py --fit` on every usable point of "
        "gpucat/cost/data/throughput_points.json (listed in fitted_on); error_band: 20th and 80th percentile of "
        "measured/estimated over the leave-one-source-out estimates. See gpucat/cost/throughput.py for their meaning.",
        "utilization": {k: round(v, 4) for k, v in sorted(factors.utilization.items())},
        "adapter": round(factors.adapter, 4),
        "overlap": round(factors.overlap, 4),
        "dequant_bytes_per_param": round(factors.dequant_bytes_per_param, 3),
        "host_s_per_kernel": float(f"{factors.host_s_per_kernel:.3g}"),
        "attention_efficiency": round(factors.attention_efficiency, 4),
        "families": dict(sorted(factors.families.items())),
        "bytes_per_flop": {k: round(v, 3) for k, v in sorted(factors.bytes_per_flop.items())},
        "error_band": {"low": round(low, 3), "high": round(high, 3)},
        "fitted_on": list(factors.fitted_on),
    }


def with_band(factors: Factors, band: tuple[float, float]) -> Factors:
    return replace(factors, error_band=band)
