"""gpucat's memory estimate against every measured point in the calibration set, next to naive rules.

    uv run python bench/memory_calibration.py [--json]

For each point of gpucat/memory/data/calibration_points.json: the measured peak (converted to GB,
in the metric the source used), gpucat's estimate in that same metric, its error, and the errors
of two naive rules on the same point: LLaMA-Factory's table (18x / 8x / 2x / x / x/2 GB per
billion parameters) and `accelerate estimate-memory`'s max-of-stages rule (full fine-tuning only).
Naive rules are compared with the measurement as published, since they name no metric.

The summary lines give, for the points held to the aim (not excluded, not out-of-memory): the
count, median and maximum absolute error, and how many are within +-35%. Excluded points are
listed with their reason and shown with gpucat's estimate anyway. Out-of-memory points report
whether gpucat's per-GPU total exceeds the card they ran out of memory on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpucat.memory.calibration import (
    AIM_MAX_ABS_ERROR,
    AIM_MEDIAN_ABS_ERROR,
    NAIVE_RULES,
    PointResult,
    evaluate,
    held_to_aim,
    summarize,
)


def _pct(error: float | None) -> str:
    return "" if error is None else f"{error:+.0%}"


def _gb(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def table(results: list[PointResult]) -> str:
    header = ("point", "ref", "metric", "measured", "gpucat", "err", "llama-f", "err", "accel", "err", "status")
    rows = [header]
    for r in results:
        p = r.point
        if p.oom_above_gb is not None:
            measured = f">{p.oom_above_gb:g} OOM"
            status = "OOM predicted" if r.oom_predicted else "OOM MISSED"
            estimated = _gb(r.estimate.per_gpu_gb)
        else:
            measured = _gb(p.measured_gb)
            status = "excluded" if p.exclude else "held"
            estimated = _gb(r.estimated_gb)
        rows.append((
            p.id, p.ref, p.metric, measured, estimated, _pct(r.error),
            _gb(r.naive_gb["llama-factory"]), _pct(r.naive_error["llama-factory"]),
            _gb(r.naive_gb["accelerate"]), _pct(r.naive_error["accelerate"]), status,
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    numeric = set(range(3, 10))
    lines = []
    for row in rows:
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def summary_lines(results: list[PointResult]) -> list[str]:
    held = held_to_aim(results)
    lines = []

    def line(name: str, errors: list[float | None], scope: str) -> None:
        s = summarize(errors)
        lines.append(
            f"{name:<14} {scope:<40} median |err| {s.median_abs_error:5.1%}   max |err| {s.max_abs_error:6.1%}"
            f"   within +-35%: {s.within_35}/{s.count}"
        )

    line("gpucat", [r.error for r in held], f"held points (n={len(held)})")
    for name in NAIVE_RULES:
        errors = [r.naive_error[name] for r in held]
        covered = sum(1 for e in errors if e is not None)
        line(name, errors, f"same points it covers ({covered})")
    runs = [r for r in results if r.error is not None and r.point.training_run]
    line("gpucat", [r.error for r in runs], f"every measured run, excluded too (n={len(runs)})")
    ooms = [r for r in results if r.point.oom_above_gb is not None]
    predicted = sum(bool(r.oom_predicted) for r in ooms)
    lines.append(f"{'gpucat':<14} out-of-memory points predicted: {predicted}/{len(ooms)}")
    aim = "meets" if summarize([r.error for r in held]).meets_aim else "MISSES"
    lines.append(
        f"aim (median <= {AIM_MEDIAN_ABS_ERROR:.0%}, every held point within +-{AIM_MAX_ABS_ERROR:.0%}): {aim}"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON record per point instead of the table")
    args = parser.parse_args(argv)
    results = evaluate()
    if args.json:
        for r in results:
            print(json.dumps({
                "id": r.point.id, "ref": r.point.ref, "metric": r.point.metric, "measured_gb": r.point.measured_gb,
                "oom_above_gb": r.point.oom_above_gb, "gpucat_gb": r.estimated_gb, "error": r.error,
                "naive_gb": r.naive_gb, "naive_error": r.naive_error, "exclude": r.point.exclude,
            }))
        return 0
    print(table(results))
    print()
    excluded = [r.point for r in results if r.point.exclude]
    print(f"Excluded ({len(excluded)}):")
    for p in excluded:
        print(f"  {p.id}: {p.exclude}")
    print()
    print("\n".join(summary_lines(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
