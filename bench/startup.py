"""`gpucat offers` against a bare `python -c "import duckdb"`, paired in one run (issue 26's bar: at most 2x).

    uv run python bench/startup.py              # 7 runs of each, medians
    uv run python bench/startup.py --runs 11 --db DB

It compiles the bytecode as .ci/run does, builds a fixtures catalog (`gpucat refresh --replay
fixtures`) in a temporary directory unless --db names one, then runs each command in a fresh
process, the reference and the subjects alternating so that load hits them alike, and prints the
medians of wall and CPU time (bench/reads_scale.py's `run`) and each subject's ratio to the
reference. The subjects: `gpucat offers` (the console script, piped), with a filter
(`--gpu H100 --on-demand`), `python -m gpucat offers` (as reads_scale runs it) and `gpucat --help`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reads_scale import ROOT, Sample, cli_env, run  # noqa: E402

BAR = 2.0


def subjects(db: str) -> dict[str, list[str]]:
    script = str(Path(sys.executable).parent / "gpucat")
    return {
        "gpucat offers": [script, "offers", "--db", db],
        "gpucat offers --gpu H100 --on-demand": [script, "offers", "--gpu", "H100", "--on-demand", "--db", db],
        "python -m gpucat offers": [sys.executable, "-m", "gpucat", "offers", "--db", db],
        "gpucat --help": [script, "--help"],
    }


def median(samples: Sequence[Sample], field: str) -> float:
    return statistics.median(getattr(s, field) for s in samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command (medians)")
    parser.add_argument("--db", help="an existing catalog (default: a fixtures refresh into a temporary one)")
    args = parser.parse_args(argv)
    env = cli_env()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "gpucat", "flows", "schemas", "scrapers", "warehouse"],
                   cwd=ROOT, check=True)  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="gpucat-startup-"))
    try:
        db = args.db or str(work / "fixtures.duckdb")
        if not args.db:
            subprocess.run([sys.executable, "-m", "gpucat", "refresh", "--replay", str(ROOT / "fixtures"), "--json", "--db", db],
                           cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        reference = [sys.executable, "-c", "import duckdb"]
        timed = {"python -c 'import duckdb'": reference, **subjects(db)}
        for command in timed.values():  # warm the page cache
            run(command, env)
        samples: dict[str, list[Sample]] = {label: [] for label in timed}
        for _ in range(args.runs):
            for label, command in timed.items():
                samples[label].append(run(command, env))
        ref_wall, ref_cpu = median(samples[next(iter(timed))], "wall_s"), median(samples[next(iter(timed))], "cpu_s")
        print(f"startup: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {args.runs} runs, medians")
        ok = True
        for label, runs in samples.items():
            wall, cpu = median(runs, "wall_s"), median(runs, "cpu_s")
            verdict = ""
            if label.startswith("gpucat offers") or label.startswith("python -m"):
                met = wall / ref_wall <= BAR
                ok &= met
                verdict = f"   bar {BAR:g}x: {'met' if met else 'NOT met'}"
            print(f"{label:<38} {wall:6.3f} s ({cpu:5.3f} s CPU)   {wall / ref_wall:5.2f}x wall, {cpu / ref_cpu:5.2f}x CPU{verdict}")
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
