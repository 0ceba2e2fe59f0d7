"""The time model against published throughputs: load the points, estimate each, fit the factors.

`data/throughput_points.json` holds measured tokens/s per GPU with the settings of each run and
its source; each point is either used to fit the factors (`role: fit`) or held back to test
them (`role: held`); a point with `exclude` is shown with its reason and held to no aim.
`bench/cost_calibration.py` prints the comparison and, with `--fit`, refits the factors.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gpucat.cost.throughput import Factors, Hardware, ModelShape, model_shape, throughput
from gpucat.memory import TrainSettings, get_model_arch
from schemas.reference import GPU_MODELS_CSV

AIM = 0.35  # held-back estimates within +-35% of the measurement


@dataclass(frozen=True)
class Point:
    id: str
    group: str
    label: str
    source: str
    role: str  # "fit" or "held"
    measured: float  # tokens/s per GPU
    shape: ModelShape
    settings: TrainSettings
    hardware: Hardware
    exclude: str | None = None


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


def gpu_rows() -> dict[str, dict[str, str]]:
    with GPU_MODELS_CSV.open(newline="", encoding="utf-8") as fh:
        return {row["gpu_model"]: row for row in csv.DictReader(fh)}


def _number(value: str) -> float | None:
    return float(value) if value else None


def hardware_for(gpu_model: str, precision: str, **config: Any) -> Hardware:
    row = gpu_rows()[gpu_model]
    peak = _number(row["fp16_tflops"] if precision == "fp16-mixed" else row["bf16_tflops"] or row["fp16_tflops"])
    if peak is None:
        raise ValueError(f"{gpu_model} has no TFLOPS figure")
    return Hardware(
        gpu_model=gpu_model,
        family=row["family"],
        architecture=row["architecture"],
        peak_tflops=peak,
        memory_bandwidth_gbps=_number(row["memory_bandwidth_gbps"]),
        nvlink_gbps=_number(row["nvlink_gbps"]),
        **config,
    )


def _point(group: dict[str, Any], raw: dict[str, Any]) -> Point:
    values = {**group.get("settings", {}), **raw.get("settings", {})}
    gpus = values.pop("gpus", 1)
    nodes = values.pop("nodes", max(1, gpus // group.get("gpus_per_node", 8)))
    if isinstance(values.get("lora_targets"), list):
        values["lora_targets"] = tuple(values["lora_targets"])
    settings = TrainSettings(**values, gpus=gpus)
    if "shape" in raw:
        s = raw["shape"]
        shape = ModelShape(s["matmul_params"], s["layers"], s["attn_dim"], s["matmul_params"], s["matmul_params"])
    else:
        shape = model_shape(get_model_arch(raw.get("model") or group["model"]), settings)
    hardware = hardware_for(
        group["gpu_model"], settings.precision, gpus=gpus, nodes=nodes,
        interconnect=group.get("interconnect"), fabric=group.get("fabric"), fabric_gbps=group.get("fabric_gbps"),
    )  # fmt: skip
    return Point(
        id=raw["id"], group=group["id"], label=raw["label"], source=group["source"], role=raw["role"],
        measured=float(raw["measured"]), shape=shape, settings=settings, hardware=hardware, exclude=raw.get("exclude"),
    )  # fmt: skip


def load_points() -> list[Point]:
    text = resources.files("gpucat.cost").joinpath("data/throughput_points.json").read_text()
    return [_point(group, raw) for group in json.loads(text)["groups"] for raw in group["points"]]


def evaluate(points: Sequence[Point], factors: Factors) -> list[PointResult]:
    out = []
    for p in points:
        estimated = throughput(p.shape, p.settings, p.hardware, factors).tokens_per_s_per_gpu
        out.append(PointResult(p, estimated, estimated / p.measured - 1))
    return out


def summarize(results: Sequence[PointResult]) -> Summary:
    errors = [abs(r.error) for r in results]
    if not errors:
        return Summary(0, 0.0, 0.0, 0)
    return Summary(len(errors), statistics.median(errors), max(errors), sum(e <= AIM for e in errors))


def in_role(results: Sequence[PointResult], role: str) -> list[PointResult]:
    return [r for r in results if r.point.role == role and not r.point.exclude]


# --- fitting -------------------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _unpack(x: Sequence[float], families: dict[str, str], fitted_on: tuple[str, ...]) -> Factors:
    n = len(families)
    return Factors(
        utilization={f: _sigmoid(v) for f, v in zip(families, x[:n], strict=True)},
        adapter=math.exp(x[n]),
        overlap=_sigmoid(x[n + 1]),
        families=dict(families),
        fitted_on=fitted_on,
    )


def fit(points: Sequence[Point], start: Factors) -> Factors:
    """Least squares on log(estimate / measurement) over the fit points (Nelder-Mead)."""
    chosen = [p for p in points if p.role == "fit" and not p.exclude]
    families = {p.hardware.family: p.hardware.architecture for p in sorted(chosen, key=lambda p: p.hardware.family)}
    fitted_on = tuple(p.id for p in chosen)
    x0 = [_logit(start.utilization.get(f, 0.4)) for f in families]
    x0 += [math.log(start.adapter), _logit(start.overlap)]

    def loss(x: Sequence[float]) -> float:
        factors = _unpack(x, families, fitted_on)
        return sum(math.log(r.estimated / r.point.measured) ** 2 for r in evaluate(chosen, factors))

    best = nelder_mead(loss, x0)
    return _unpack(best, families, fitted_on)


def nelder_mead(f: Callable[[Sequence[float]], float], x0: Sequence[float], *, step: float = 0.5,
                iterations: int = 3000, tolerance: float = 1e-10) -> list[float]:  # fmt: skip
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


def factors_dict(factors: Factors) -> dict[str, Any]:
    return {
        "about": "Fitted by `uv run python bench/cost_calibration.py --fit` on the points listed in fitted_on "
        "(gpucat/cost/data/throughput_points.json, role 'fit'); see gpucat/cost/throughput.py for their meaning.",
        "utilization": {k: round(v, 4) for k, v in sorted(factors.utilization.items())},
        "adapter": round(factors.adapter, 4),
        "overlap": round(factors.overlap, 4),
        "families": dict(sorted(factors.families.items())),
        "fitted_on": list(factors.fitted_on),
    }


def with_defaults(factors: Factors | None = None) -> Factors:
    return factors or Factors(utilization={}, adapter=1.0, overlap=0.8)

