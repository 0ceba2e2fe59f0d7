"""gpucat's memory estimate against every measured point in the calibration set, in sample and
out of sample (leave one source out), next to naive rules.

    uv run python bench/memory_calibration.py [--json] [--write-bands]

For each point of gpucat/memory/data/calibration_points.json: the measured peak (converted to GB,
in the metric the source used), gpucat's estimate in that same metric, its error, and the errors
of two naive rules on the same point: LLaMA-Factory's table (18x / 8x / 2x / x / x/2 GB per
billion parameters) and `accelerate estimate-memory`'s max-of-stages rule (full fine-tuning only).
Naive rules are compared with the measurement as published, since they name no metric.

Out of sample: each publication (calibration group) is held out in turn; the fitted constants
are refitted on the other publications' points only and the held-out points are estimated with
them. The same is printed holding out whole toolchains (LitGPT's two publications together, ...).
Every constant (the activation overhead, fitted on the allocated/active points, and the allocator
margin, fitted on the reserved points) is listed with the points it was fitted on. `--write-bands` writes the per-class
error bands of the leave-one-source-out evaluation to gpucat/memory/data/error_bands.json.

Then the direction of the errors (the signed median and the share of under-estimates, in
sample and out of sample) and the band coverage per method: the share of held points whose
measurement lies inside the band of their out-of-sample estimate, with the shipped bands and
with bands computed without the point's own source (what a new publication would see).

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

from gpucat.memory.bands import HIGH_PERCENTILE, LOW_PERCENTILE
from gpucat.memory.calibration import (
    AIM_MAX_ABS_ERROR,
    AIM_MEDIAN_ABS_ERROR,
    NAIVE_RULES,
    PointResult,
    band_coverage,
    compute_bands,
    constants_report,
    direction,
    evaluate,
    held_out_band_coverage,
    held_to_aim,
    load_points,
    loso_results,
    summarize,
    within,
)

OOS_AIM_MEDIAN, OOS_AIM_WITHIN, OOS_BOUND = 0.10, 0.80, 0.25
AIM_SIGNED_MEDIAN = 0.03  # the estimate should not lean low (or high) by more than this
AIM_COVERAGE = (0.75, 0.90)  # share of held-out measurements inside their band, per method
BANDS_PATH = Path(__file__).resolve().parents[1] / "gpucat/memory/data/error_bands.json"


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
        f"in-sample aim (median <= {AIM_MEDIAN_ABS_ERROR:.0%}, every held point within +-{AIM_MAX_ABS_ERROR:.0%}): {aim}"
    )
    return lines


def out_of_sample_lines(results: list[PointResult]) -> list[str]:
    """In-sample and leave-one-source-out figures side by side, per source and overall."""
    points = tuple(r.point for r in results)
    held_ids = {r.point.id for r in held_to_aim(results)}
    by_pub, fitted_pub = loso_results(points, "group")
    by_tool, _ = loso_results(points, "toolchain")

    def figures(rs: list[PointResult]) -> str:
        errors = [r.error for r in rs if r.point.id in held_ids]
        s = summarize(errors)
        if not s.count:
            return f"{'':>34}"
        return f"n={s.count:<3} median |err| {s.median_abs_error:5.1%}  +-25%: {within(errors, OOS_BOUND):>3}/{s.count:<3}"

    lines = [f"{'source held out':<22} {'toolchain':<18} {'in sample':<44} {'left out (LOSO)':<44} margin / overhead"]
    for source in sorted({p.group for p in points}):
        ins = [r for r in results if r.point.group == source]
        outs = [r for r in by_pub if r.point.group == source]
        tool = ins[0].point.toolchain
        lines.append(f"{source:<22} {tool:<18} {figures(ins):<44} {figures(outs):<44} "
                     f"{fitted_pub[source].allocator_margin:.2f} / {fitted_pub[source].activation_overhead:.2f}")
    n_sources = len({r.point.group for r in results if r.point.id in held_ids})
    n_tools = len({r.point.toolchain for r in results if r.point.id in held_ids})
    lines.append(f"{'all':<22} {f'{n_sources} sources':<18} {figures(results):<44} {figures(by_pub):<44}")
    lines.append(f"{'all, by toolchain':<22} {f'{n_tools} toolchains':<18} {'':<44} {figures(by_tool):<44}")
    unseen = [r for r in by_pub if r.point.unseen_by_design]
    lines.append(f"{'unseen by design':<22} {'':<18} {'':<44} {figures(unseen):<44} "
                 "(sources added after the mechanisms were written)")
    errors = [r.error for r in by_pub if r.point.id in held_ids]
    s = summarize(errors)
    ok = (s.median_abs_error <= OOS_AIM_MEDIAN and within(errors, OOS_BOUND) >= OOS_AIM_WITHIN * s.count
          and s.count >= 80 and n_sources >= 8)
    lines.append(f"out-of-sample aim (LOSO median <= {OOS_AIM_MEDIAN:.0%}, >= {OOS_AIM_WITHIN:.0%} within "
                 f"+-{OOS_BOUND:.0%}, >= 80 points, >= 8 sources): {'meets' if ok else 'MISSES'}")
    lines += ["", "Direction (signed error = (estimate - measured) / measured; under = estimate below the measurement):"]
    for name, rs in (("in sample", results), ("LOSO", by_pub)):
        d = direction([r.error for r in rs if r.point.id in held_ids])
        lines.append(f"  {name:<10} n={d.count:<4} signed median {d.median_signed_error:+6.1%}   "
                     f"under-estimates {d.under}/{d.count} ({d.under_share:.0%})")
    d = direction([r.error for r in by_pub if r.point.id in held_ids])
    lines.append(f"direction aim (LOSO signed median within +-{AIM_SIGNED_MEDIAN:.0%}): "
                 f"{'meets' if abs(d.median_signed_error) <= AIM_SIGNED_MEDIAN else 'MISSES'}")
    lines += ["", "Band coverage (held points whose measurement lies inside the band of their LOSO estimate):"]
    shipped = compute_bands(by_pub)
    own, new_source = band_coverage(by_pub, shipped), held_out_band_coverage(by_pub)
    cover_ok = True
    for method in sorted(own):
        inside, n = own[method]
        inside_new, n_new = new_source.get(method, (0, 0))
        lines.append(f"  {method:<6} bands from every source: {inside:>3}/{n:<3} ({inside / n:.0%})   "
                     f"bands without the point's source: {inside_new:>3}/{n_new:<3} ({inside_new / max(n_new, 1):.0%})")
        if method != "all":
            cover_ok &= AIM_COVERAGE[0] <= inside / n <= AIM_COVERAGE[1]
    lines.append(f"coverage aim ({AIM_COVERAGE[0]:.0%}..{AIM_COVERAGE[1]:.0%} per method, shipped bands): "
                 f"{'meets' if cover_ok else 'MISSES'}")
    lines += ["", "Fitted and set constants:"]
    for c in constants_report(points):
        lines.append(f"  {c.name} = {c.value:g}: {c.basis}")
        if c.fitted_on:
            lines.append(f"    fitted on {len(c.fitted_on)} points: {', '.join(c.fitted_on)}")
    lines += ["", f"Error bands (leave-one-source-out signed error, {LOW_PERCENTILE}th..{HIGH_PERCENTILE}th percentile; "
                  "band = estimate / (1 + err), widened to contain the estimate):"]
    for key, band in compute_bands(by_pub).items():
        lines.append(f"  {key:<16} n={band['n']:<3} {band['low']:+7.1%} .. {band['high']:+7.1%}   "
                     f"median |err| {band['median_abs']:.1%}")
    return lines


def write_bands(results: list[PointResult]) -> None:
    by_pub, _ = loso_results(tuple(r.point for r in results), "group")
    BANDS_PATH.write_text(json.dumps({
        "about": "Written by bench/memory_calibration.py --write-bands: per method/sharding class, the 5th "
                 "and 95th percentile (low, high) of the leave-one-source-out signed error (estimate - "
                 "measured) / measured over held calibration points, their count n and median |error|. "
                 "coverage: per method, the share of held points inside their band. gpucat.memory.bands reads it.",
        "bands": (bands := compute_bands(by_pub)),
        "coverage": {m: round(inside / n, 3) for m, (inside, n) in band_coverage(by_pub, bands).items()},
    }, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON record per point instead of the table")
    parser.add_argument("--write-bands", action="store_true", help="write gpucat/memory/data/error_bands.json")
    args = parser.parse_args(argv)
    results = evaluate(load_points())
    if args.write_bands:
        write_bands(results)
        print(f"wrote {BANDS_PATH}")
        return 0
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
    print()
    print("\n".join(out_of_sample_lines(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
