"""gpucat's training-time model against published throughputs, leave-one-source-out.

    uv run python bench/cost_calibration.py          # LOSO: each source estimated with constants fitted on the others
    uv run python bench/cost_calibration.py --fit    # refit on every point, write the constants and the LOSO band

Every usable point of gpucat/cost/data/throughput_points.json: the measured tokens/s per GPU, the
LOSO estimate, and its error. The summary gives the median |error|, the share within +-35% and the
signed median, over all points, by group (method, card class, multi-GPU, source) and, separately,
for the points added after the mechanisms were written. Excluded points are listed with their reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpucat.cost.calibration import (
    AIM,
    PointResult,
    error_band,
    factors_dict,
    fit,
    load_points,
    loso,
    summarize,
    with_band,
)  # fmt: skip
from gpucat.cost.throughput import load_factors

FACTORS_JSON = Path(__file__).resolve().parents[1] / "gpucat" / "cost" / "data" / "throughput_factors.json"
DATACENTER = ("A100", "H100", "H200", "B200", "B300", "GB200", "MI300X", "MI325X", "H20")


def card_class(r: PointResult) -> str:
    family = r.point.hardware.family
    if family in DATACENTER:
        return "datacenter HBM"
    if family.startswith("RTX") or family in ("RTX 4090", "RTX 3090"):
        return "consumer/workstation"
    return "PCIe GDDR (L4/L40S/A10G)"


GROUPS: dict[str, Callable[[PointResult], str]] = {
    "method": lambda r: r.point.settings.method,
    "card class": card_class,
    "GPUs": lambda r: "1 GPU" if r.point.hardware.gpus == 1 else ("multi-node" if r.point.hardware.nodes > 1 else "multi-GPU, one node"),
    "source": lambda r: r.point.source,
}


def line(name: str, results: list[PointResult]) -> str:
    s = summarize(results)
    return (f"{name:<34} n={s.count:>3}  median |err| {s.median_abs_error:6.1%}  within +-{AIM:.0%} "
            f"{s.within_aim:>3}/{s.count:<3} ({s.within_aim / max(1, s.count):4.0%})  signed median {s.signed_median:+6.1%}")  # fmt: skip


def table(results: list[PointResult]) -> str:
    rows = [("point", "gpu", "gpus", "method", "seq", "measured", "loso", "err", "source")]
    for r in results:
        p = r.point
        mark = "*" if p.added_after_mechanisms else ""
        rows.append((p.id + mark, p.hardware.gpu_model, str(p.hardware.gpus), p.settings.method, str(p.settings.seq_len),
                     f"{p.measured:,.0f}", f"{r.estimated:,.0f}", f"{r.error:+.0%}", p.source))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    numeric = {2, 4, 5, 6, 7}
    out = []
    for row in rows:
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))]
        out.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="refit the constants on every point and write them with the LOSO band")
    parser.add_argument("--json", action="store_true", help="print the LOSO results as JSON")
    args = parser.parse_args()
    points = load_points()
    results = loso(points)
    if args.fit:
        factors = with_band(fit(points), error_band(results))
        FACTORS_JSON.write_text(json.dumps(factors_dict(factors), indent=2) + "\n")
        load_factors.cache_clear()
        print(f"wrote {FACTORS_JSON}")
    if args.json:
        print(json.dumps([{"id": r.point.id, "source": r.point.source, "measured": r.point.measured,
                           "loso_estimate": round(r.estimated, 1), "error": round(r.error, 4),
                           "added_after_mechanisms": r.point.added_after_mechanisms} for r in results], indent=2))  # fmt: skip
        return 0
    print(table(results))
    excluded = [p for p in points if p.exclude]
    print(f"\nexcluded ({len(excluded)}):")
    for p in excluded:
        print(f"  {p.id}: {p.exclude}")
    factors = load_factors()
    print("\nconstants: " + json.dumps({k: v for k, v in factors_dict(factors).items() if k not in ("about", "fitted_on", "families", "bytes_per_flop")}))
    sources = sorted({r.point.source for r in results})
    frameworks = sorted({r.point.framework for r in results})
    print(f"\nLOSO over {len(results)} points from {len(sources)} sources, {len(frameworks)} frameworks ({', '.join(frameworks)})")
    print(line("all points", results))
    for title, key in GROUPS.items():
        buckets: dict[str, list[PointResult]] = defaultdict(list)
        for r in results:
            buckets[key(r)].append(r)
        for name in sorted(buckets):
            print(line(f"  {title}: {name}", buckets[name]))
    added = [r for r in results if r.point.added_after_mechanisms]
    print(line("added after the mechanisms (*)", added))
    print(line("written with the mechanisms", [r for r in results if not r.point.added_after_mechanisms]))
    low, high = error_band(results)
    print(f"likely range shown by `cost`: hours x {low:.2f} .. x {high:.2f} (20th-80th percentile of measured/estimated)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
