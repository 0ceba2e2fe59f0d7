"""Every speed figure of gpucat, each as a ratio against its reference measured in the same run.

    uv run python bench/run.py                 # everything (the AWS part takes a few minutes)
    uv run python bench/run.py --skip-aws      # refresh and read figures only
    uv run python bench/run.py --aws-file F    # reuse a price list instead of generating one
    uv run python bench/run.py --skip-aws --skip-scale --skip-tracked   # the quick figures only

Then, unless skipped, the figures of issue 26 from their own benches (each also runs alone):
bench/refresh_floor.py (refresh vs stack import, history, market RSS), bench/reads_scale.py
(offers vs import duckdb, cost at 10k/100k offers, report after 1,000 refreshes) and
bench/tracked.py (a flow run against a real `prefect server start` vs the in-process refresh).

Each figure runs in fresh processes, reference and subject alternating, and reports medians:

- refresh: `gpucat refresh --replay fixtures` (in-process) vs the same refresh as a Prefect flow
  on its ephemeral server, each into a new database;
- read: `gpucat offers` vs a bare `python -c "import duckdb, rich"`;
- AWS: our parser vs gpuhunt's on the same generated 2M-row, all-region-sized price list.
  gpuhunt is installed for the bench only (`uv run --with gpuhunt[aws]`, in uv's cache), never
  as a project dependency; its network steps (EC2 API, spot prices) are switched off, so only
  its parse of the CSV is timed;
- memory: the peak RSS of each process; for the parsers their own high-water mark (VmHWM) plus
  their scan processes' (an upper bound); for the commands wait4's, which also counts the bench's
  own RSS at fork time (about 30 MB at that point).

The generated CSV (~1.5 GB) lives in a temporary directory that is deleted at the end, even on
failure or Ctrl-C; the run prints its path and size while it exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURES = ROOT / "fixtures"
GPUHUNT = "gpuhunt[aws]"


@dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float  # user + system, the child's and its waited-for descendants'
    peak_rss_mb: float
    report: dict  # what the child printed as JSON on its last stdout line, if anything


def run(args: Sequence[str], env: dict[str, str] | None = None) -> Sample:
    """Wall time and peak RSS (from wait4: the child's own, or a descendant's if larger) of one command."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(list(args), cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            raise SystemExit(f"bench: {' '.join(args)} failed ({proc.returncode}):\n{err.read().decode()[-2000:]}")
        out.seek(0)
        lines = out.read().decode().strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else {}
    except ValueError:
        report = {}
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, report if isinstance(report, dict) else {})


def paired(reference: Sequence[str], subject: Sequence[str], reps: int, env: dict[str, str]) -> tuple[list[Sample], list[Sample]]:
    """Reference and subject alternating, so load on the machine hits both alike."""
    refs, subs = [], []
    for _ in range(reps):
        refs.append(run(reference, env))
        subs.append(run(subject, env))
    return refs, subs


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def env_for_cli() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUCAT_") and k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = tempfile.mkdtemp(prefix="gpucat-bench-prefect-")
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    env["PREFECT_LOGGING_LEVEL"] = "WARNING"
    return env


def bytecode_state() -> str:
    import duckdb

    cached = list(Path(duckdb.__file__).parent.glob("__pycache__/*.pyc"))
    state = "compiled at install" if cached else "not compiled"
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        state += ", PYTHONDONTWRITEBYTECODE set"
    return state


def bench_refresh(reps: int, work: Path, env: dict[str, str]) -> tuple[float, float, Path]:
    gpucat = [str(Path(sys.executable).parent / "gpucat")]
    flow_script = (
        "import sys; from flows.refresh import refresh; "
        "state = refresh(replay_dir=sys.argv[1], db_path=sys.argv[2], return_state=True); "
        "sys.exit(0 if state.is_completed() else 1)"
    )
    flows, inproc = [], []
    for i in range(reps):
        flows.append(run([sys.executable, "-c", flow_script, str(FIXTURES), str(work / f"flow-{i}.duckdb")], env))
        inproc.append(run([*gpucat, "refresh", "--replay", str(FIXTURES), "--json", "--db", str(work / f"inproc-{i}.duckdb")], env))
    flow_s, inproc_s = median([s.wall_s for s in flows]), median([s.wall_s for s in inproc])
    flow_cpu, inproc_cpu = median([s.cpu_s for s in flows]), median([s.cpu_s for s in inproc])
    print(f"refresh --replay fixtures  in-process {inproc_s:6.2f} s ({inproc_cpu:.2f} s CPU)   as a Prefect flow {flow_s:6.2f} s ({flow_cpu:.2f} s CPU)   "
          f"ratio {flow_s / inproc_s:5.1f}x faster   peak RSS {max(s.peak_rss_mb for s in inproc):.0f} MB vs {max(s.peak_rss_mb for s in flows):.0f} MB")  # fmt: skip
    return inproc_s, inproc_cpu, work / "inproc-0.duckdb"


def bench_read(reps: int, db: Path, env: dict[str, str]) -> tuple[float, float]:
    gpucat = str(Path(sys.executable).parent / "gpucat")
    bare, offers = paired([sys.executable, "-c", "import duckdb, rich"], [gpucat, "offers", "--db", str(db)], reps, env)
    bare_s, offers_s = median([s.wall_s for s in bare]), median([s.wall_s for s in offers])
    bare_cpu, offers_cpu = median([s.cpu_s for s in bare]), median([s.cpu_s for s in offers])
    print(f"gpucat offers              {offers_s:6.2f} s ({offers_cpu:.2f} s CPU)   bare import duckdb, rich {bare_s:6.2f} s ({bare_cpu:.2f} s CPU)   "
          f"ratio {offers_s / bare_s:5.2f}x   peak RSS {max(s.peak_rss_mb for s in offers):.0f} MB vs {max(s.peak_rss_mb for s in bare):.0f} MB")  # fmt: skip
    return offers_s, bare_s, offers_cpu


def bench_aws(reps: int, path: Path) -> tuple[float, float, float]:
    ours = [sys.executable, __file__, "--child-aws", str(path)]
    theirs = ["uv", "run", "--quiet", "--isolated", "--no-project", "--with", GPUHUNT, "python", __file__, "--child-gpuhunt", str(path)]
    run(theirs)  # install gpuhunt into uv's cache before anything is timed
    gh, us = [], []
    for _ in range(reps):
        gh.append(run(theirs))
        us.append(run(ours))
    gh_wall, us_wall = median([s.report["wall_s"] for s in gh]), median([s.report["wall_s"] for s in us])
    gh_cpu, us_cpu = median([s.report["cpu_s"] for s in gh]), median([s.report["cpu_s"] for s in us])
    us_rss = max(s.report["peak_rss_mb"] for s in us)
    us_all = "/".join(f"{s.report['peak_rss_mb']:.0f}" for s in us)
    gh_rss = max(s.report["peak_rss_mb"] for s in gh)
    print(f"AWS 2M-row parse           ours {us_wall:6.2f} s wall, {us_cpu:5.2f} s CPU   gpuhunt {gh_wall:6.2f} s wall, {gh_cpu:5.2f} s CPU   "
          f"ratio {gh_wall / us_wall:5.1f}x wall, {gh_cpu / us_cpu:4.1f}x CPU")  # fmt: skip
    print(f"                           peak RSS ours {us_rss:.0f} MB (runs: {us_all}; parser and its scan processes together)   gpuhunt {gh_rss:.0f} MB   "
          f"GPU offers ours {us[0].report['offers']} / gpuhunt {gh[0].report['gpu_offers']} (+{gh[0].report['offers'] - gh[0].report['gpu_offers']} CPU-only)")  # fmt: skip
    return gh_wall / us_wall, gh_cpu / us_cpu, us_rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="paired repetitions per figure (default 3)")
    parser.add_argument("--skip-aws", action="store_true", help="leave out the AWS parse (minutes)")
    parser.add_argument("--aws-file", type=Path, help="an AWS price list CSV to parse instead of generating one")
    parser.add_argument("--aws-rows", type=int, default=2_000_000, help="rows of the generated price list")
    parser.add_argument("--skip-scale", action="store_true", help="leave out the floor, history and market figures (issue 26; minutes)")
    parser.add_argument("--skip-tracked", action="store_true", help="leave out the flow run against a real Prefect server (minutes)")
    args = parser.parse_args()

    env = env_for_cli()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, bytecode {bytecode_state()}")
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="gpucat-bench-") as work_dir:
        work = Path(work_dir)
        try:
            inproc_s, inproc_cpu, db = bench_refresh(args.reps, work, env)
            offers_s, bare_s, offers_cpu = bench_read(max(args.reps, 5), db, env)
            # (issue 26 retired the old "refresh <= 4x offers" bar: every gain in offers lowered it;
            # refresh_floor.py measures refresh against the import of the stack it needs instead)
            verdicts.append(("offers <= 3x bare import (wall)", offers_s / bare_s, offers_s <= 3 * bare_s))
            if not args.skip_aws:
                path = args.aws_file
                if path is None:
                    path = work / "aws-pricelist.csv"
                    sys.path.insert(0, str(HERE))
                    import aws_pricelist_gen

                    stats = aws_pricelist_gen.generate(str(path), args.aws_rows, seed=0)
                    print(f"(generated {stats.rows:,} rows, {stats.size_bytes / 1e9:.2f} GB at {path}; deleted when the bench ends)")
                wall_ratio, cpu_ratio, rss = bench_aws(args.reps, path)
                verdicts.append(("AWS parse >= 3x gpuhunt (wall)", wall_ratio, wall_ratio >= 3))
                verdicts.append(("AWS parse under 300 MB", rss, rss < 300))
        finally:
            shutil.rmtree(env["PREFECT_HOME"], ignore_errors=True)
    failed = not all(ok for _, _, ok in verdicts)
    sys.path.insert(0, str(HERE))
    if not args.skip_scale:
        # Issue 26's bars, each bench printing its own figures and PASS/FAIL lines: a refresh into a
        # new database vs the stack's import, after 1 and 1,000 refreshes, and RSS at 10k/100k Vast
        # offers (refresh_floor); offers vs import duckdb, cost at 10k/100k offers, the report after
        # 1 and 1,000 refreshes (reads_scale).
        import reads_scale
        import refresh_floor

        print()
        failed |= refresh_floor.main(["--reps", str(args.reps)]) != 0
        print()
        failed |= reads_scale.main(["--runs", str(args.reps)]) != 0
    if not args.skip_tracked:
        import tracked

        print()
        figures = tracked.main(["--rounds", str(args.reps)])
        verdicts.append(("tracked flow run <= 2x in-process refresh", figures["ratio"], figures["ratio"] <= 2))
    print()
    for name, value, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {name}  ({value:.2f})")
    return 1 if failed or not all(ok for _, _, ok in verdicts) else 0


# --- child processes ----------------------------------------------------------------------------


def _peak_rss_mb(children: bool = True) -> float:
    """This process's peak RSS (VmHWM), plus its children's when asked.

    Not ru_maxrss for the process itself: Linux carries the parent's RSS at fork time into the
    child's ru_maxrss across exec, so a child of a big process would look big. For children
    ru_maxrss is all there is: an upper bound (it includes this process's RSS when it spawned them).
    """
    import resource

    own = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:")) / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 if children else 0.0
    return own + kids


def _child_aws(path: str) -> None:
    """Our parser over the whole file (parse only, as gpuhunt's side)."""
    sys.path.insert(0, str(ROOT))
    from datetime import UTC, datetime

    from gpucat.schemas.records import Offer
    from gpucat.scrapers import aws_pricelist

    cpu, wall = time.process_time(), time.perf_counter()
    with open(path, "rb") as body:
        items = list(aws_pricelist.parse(body, url="https://pricing.us-east-1.amazonaws.com/bench.csv", fetched_at=datetime.now(UTC)))
    wall = time.perf_counter() - wall
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "wall_s": wall, "cpu_s": time.process_time() - cpu + kids.ru_utime + kids.ru_stime, "peak_rss_mb": _peak_rss_mb(),
        "offers": sum(isinstance(i, Offer) for i in items),
    }))  # fmt: skip


def _child_gpuhunt(path: str) -> None:
    """gpuhunt's AWS provider over the same file, its network enrichment steps switched off."""
    from gpuhunt.providers import aws

    class CsvOnly(aws.AWSProvider):
        def _fill_gpu_details(self, offers):  # EC2 DescribeInstanceTypes: network, not parsing
            pass

        def _with_spot_offers(self, offers):  # EC2 spot price history: network, not parsing
            return offers

    provider = CsvOnly(cache_path=path)
    cpu, wall = time.process_time(), time.perf_counter()
    items = provider.get()
    print(json.dumps({
        "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "peak_rss_mb": _peak_rss_mb(False),
        "offers": len(items), "gpu_offers": sum(1 for i in items if i.gpu_count),
    }))  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child-aws":
        _child_aws(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--child-gpuhunt":
        _child_gpuhunt(sys.argv[2])
    else:
        raise SystemExit(main())
