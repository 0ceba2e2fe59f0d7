"""gpucat's training-time model against published throughputs, and the fit of its factors.

    uv run python bench/cost_calibration.py          # estimate vs measurement, point by point
    uv run python bench/cost_calibration.py --fit    # refit the factors, write them, then compare

Every point of gpucat/cost/data/throughput_points.json: the measured tokens/s per GPU, gpucat's
estimate with the stored factors (gpucat/cost/data/throughput_factors.json), the error, and
whether the point was used to fit the factors or held back to test them. The summary lines give,
for each role, the count, median and maximum absolute error and how many are within +-35%.
Excluded points are listed with their reason and held to no aim.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpucat.cost.calibration import AIM, PointResult, evaluate, factors_dict, fit, in_role, load_points, summarize
from gpucat.cost.throughput import load_factors

FACTORS_JSON = Path(__file__).resolve().parents[1] / "gpucat" / "cost" / "data" / "throughput_factors.json"


def table(results: list[PointResult]) -> str:
    rows = [("point", "gpu", "gpus", "method", "seq", "measured", "gpucat", "err", "role")]
    for r in results:
        p = r.point
        role = f"excluded: {p.exclude}" if p.exclude else p.role
        rows.append((p.id, p.hardware.gpu_model, str(p.hardware.gpus), p.settings.method, str(p.settings.seq_len),
                     f"{p.measured:,.0f}", f"{r.estimated:,.0f}", f"{r.error:+.0%}", role))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    numeric = {2, 4, 5, 6, 7}
    lines = []
    for row in rows:
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


def summary_lines(results: list[PointResult]) -> list[str]:
    lines = []
    for role, name in (("held", "held back"), ("fit", "used to fit")):
        s = summarize(in_role(results, role))
        lines.append(
            f"{name:<12} (n={s.count:>2})  median |err| {s.median_abs_error:5.1%}   max |err| {s.max_abs_error:5.1%}"
            f"   within +-{AIM:.0%}: {s.within_aim}/{s.count}"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="refit the factors on the 'fit' points and write them")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    points = load_points()
    factors = load_factors()
    if args.fit:
        factors = fit(points, factors)
        FACTORS_JSON.write_text(json.dumps(factors_dict(factors), indent=2) + "\n")
        load_factors.cache_clear()
        print(f"wrote {FACTORS_JSON.relative_to(Path.cwd()) if FACTORS_JSON.is_relative_to(Path.cwd()) else FACTORS_JSON}")
    results = evaluate(points, factors)
    if args.json:
        print(json.dumps([{"id": r.point.id, "role": r.point.role, "exclude": r.point.exclude,
                           "measured": r.point.measured, "estimated": round(r.estimated, 1),
                           "error": round(r.error, 4)} for r in results], indent=2))  # fmt: skip
        return 0
    print(table(results))
    print()
    print("factors: " + json.dumps({k: v for k, v in factors_dict(factors).items() if k not in ("about", "fitted_on")}))
    for line in summary_lines(results):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
