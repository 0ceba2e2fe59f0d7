"""Read commands as the market and its history grow: `offers`, `cost` and `report` on synthetic catalogs.

    uv run python bench/reads_scale.py              # 3 runs of each command, medians
    uv run python bench/reads_scale.py --runs 5 --keep DIR

It builds every catalog itself, in a temporary directory deleted at the end (or in --keep DIR):

- base: `gpucat refresh --replay fixtures` into a new database (one refresh);
- 10k / 100k: the base plus copies of Vast's real current rows (fixtures/vast-bundles), each
  copy a new offer_id, until Vast lists that many offers: a marketplace of real-sized rows;
- 1,000 refreshes: the base plus 999 synthetic refreshes an hour apart before each offer's current
  version, in which about half the offers change price (x0.8..1.2 of today's), bulk-inserted as
  closed versions: the rate of change 200 real replays with moving prices produced (about 94k
  versions after 200, issue 26).

Each command runs in a fresh process, reference and subject alternating so load hits both alike,
and the medians of wall time and CPU time (user + system, wait4) are printed with the peak RSS. The
bars (issue 26): offers <= 2x `python -c "import duckdb"`; `cost --include-stale` and a `cost` with
an empty answer <= 5x `offers` on the same catalog; `report` after 1,000 refreshes < 3x after 1.
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
JOB = ["--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M"]
# Lambda sells no spot: the filters name the market as what emptied the answer (counted, not re-asked).
EMPTY = [*JOB, "--provider", "lambda", "--spot"]

REPLICATE_SQL = """
INSERT INTO offer_versions
SELECT o.* REPLACE (o.offer_id || '/copy' || r.range AS offer_id)
FROM offer_versions AS o, range(CAST($copies AS BIGINT)) AS r
WHERE o.provider = 'vast' AND o.valid_to IS NULL
"""
# One version per offer and refresh k in which it changed (k = 0: first listed); each refresh an hour
# apart, ending where the offer's current version starts, so the current rows are untouched.
HISTORY_SQL = """
INSERT INTO offer_versions
WITH changes AS (
    SELECT cur.*, s.range AS k, cur.valid_from - to_hours(CAST($n - s.range AS BIGINT)) AS t
    FROM (SELECT * FROM offer_versions WHERE valid_to IS NULL) AS cur, range(CAST($n AS BIGINT)) AS s
    WHERE s.range = 0 OR hash(cur.provider, cur.offer_id, s.range) % 2 = 0
)
SELECT * EXCLUDE (k, t) REPLACE (
    usd_per_hour * (0.8 + (hash(offer_id, k) % 400) / 1000.0) AS usd_per_hour,
    usd_per_gpu_hour * (0.8 + (hash(offer_id, k) % 400) / 1000.0) AS usd_per_gpu_hour,
    t AS scraped_at, 'synthetic:' || k AS content_hash, t AS valid_from,
    coalesce(lead(t) OVER (PARTITION BY provider, offer_id ORDER BY t), valid_from) AS valid_to)
FROM changes
"""


@dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float


def run(args: Sequence[str], env: dict[str, str]) -> Sample:
    """Wall time, CPU time and peak RSS (wait4) of one command, which must succeed."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(list(args), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise SystemExit(f"reads_scale: {' '.join(args)} failed:\n{err.read().decode()[-2000:]}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUCAT_")}
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    return env


def gpucat(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpucat", *args]


CATALOGS = {"base": "base", "10k": "vast-10k", "100k": "vast-100k", "1000": "history-1000"}


def build(work: Path, env: dict[str, str]) -> dict[str, Path]:
    import duckdb

    base = work / "base.duckdb"
    started = time.perf_counter()
    run(gpucat("refresh", "--replay", str(FIXTURES), "--json", "--db", str(base)), env)
    dbs = {"base": base}
    for name, offers in (("10k", 10_000), ("100k", 100_000)):
        path = work / f"vast-{name}.duckdb"
        shutil.copy(base, path)
        with duckdb.connect(str(path)) as con:
            listed = con.execute("SELECT count(*) FROM current_offers WHERE provider = 'vast'").fetchone()[0]
            con.execute(REPLICATE_SQL, {"copies": -(-offers // listed) - 1})
            vast = con.execute("SELECT count(*) FROM current_offers WHERE provider = 'vast'").fetchone()[0]
        dbs[name] = path
        print(f"catalog {name:>5}: {vast:,} Vast offers ({listed} real rows replicated)")
    path = work / "history-1000.duckdb"
    shutil.copy(base, path)
    with duckdb.connect(str(path)) as con:
        con.execute(HISTORY_SQL, {"n": 999})
        versions = con.execute("SELECT count(*) FROM offer_versions").fetchone()[0]
    dbs["1000"] = path
    with duckdb.connect(str(base), read_only=True) as con:
        base_versions = con.execute("SELECT count(*) FROM offer_versions").fetchone()[0]
    print(f"history: {base_versions:,} versions after 1 refresh, {versions:,} after 1,000 (built in {time.perf_counter() - started:.0f} s)")
    return dbs


def paired(reference: Sequence[str], subject: Sequence[str], runs: int, env: dict[str, str]) -> tuple[list[Sample], list[Sample]]:
    run(reference, env), run(subject, env)  # warm the page cache and the bytecode
    refs, subs = [], []
    for _ in range(runs):
        refs.append(run(reference, env))
        subs.append(run(subject, env))
    return refs, subs


def line(label: str, subject: list[Sample], ref_label: str, reference: list[Sample], bar: float) -> bool:
    wall, ref_wall = statistics.median(s.wall_s for s in subject), statistics.median(s.wall_s for s in reference)
    cpu, ref_cpu = statistics.median(s.cpu_s for s in subject), statistics.median(s.cpu_s for s in reference)
    ok = wall / ref_wall <= bar
    print(f"{label:<34} {wall:6.2f} s ({cpu:5.2f} s CPU, {max(s.peak_rss_mb for s in subject):4.0f} MB)   vs {ref_label:<26}"
          f" {ref_wall:6.2f} s ({ref_cpu:5.2f} s CPU)   {wall / ref_wall:5.2f}x wall, {cpu / ref_cpu:5.2f}x CPU"
          f"   bar {bar:g}x: {'met' if ok else 'NOT met'}")  # fmt: skip
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each command (medians)")
    parser.add_argument("--keep", type=Path, help="build the catalogs in this directory and keep them")
    parser.add_argument("--build-only", type=Path, help=argparse.SUPPRESS)  # the child that builds them
    args = parser.parse_args(argv)
    env = cli_env()
    if args.build_only:
        build(args.build_only, env)
        return 0
    work = args.keep or Path(tempfile.mkdtemp(prefix="gpucat-reads-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"reads_scale: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, catalogs in {work}")
        # Built in a child: a command forked from a process holding a big DuckDB would report its RSS.
        subprocess.run([sys.executable, __file__, "--build-only", str(work)], check=True, env=env)
        dbs = {name: work / f"{file}.duckdb" for name, file in CATALOGS.items()}
        met = []
        bare, offers = paired([sys.executable, "-c", "import duckdb"], gpucat("offers", "--db", str(dbs["base"])), args.runs, env)
        met.append(line("offers (fixtures)", offers, "python -c 'import duckdb'", bare, 2))
        for size in ("10k", "100k"):
            db = str(dbs[size])
            offers, cost = paired(gpucat("offers", "--db", db), gpucat("cost", *JOB, "--include-stale", "--db", db), args.runs, env)
            met.append(line(f"cost --include-stale ({size})", cost, f"offers ({size})", offers, 5))
            offers, empty = paired(gpucat("offers", "--db", db), gpucat("cost", *EMPTY, "--db", db), args.runs, env)
            met.append(line(f"cost, empty answer ({size})", empty, f"offers ({size})", offers, 5))
        out = str(work / "report.html")
        one, many = paired(gpucat("report", "--out", out, "--db", str(dbs["base"])),
                           gpucat("report", "--out", out, "--db", str(dbs["1000"])), args.runs, env)  # fmt: skip
        met.append(line("report (1,000 refreshes)", many, "report (1 refresh)", one, 3))
        print(f"bars met: {sum(met)} of {len(met)}")
        return 0 if all(met) else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
