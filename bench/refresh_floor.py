"""How close a refresh runs to its floor, and whether it stays there as history and markets grow (issue 26).

    uv run python bench/refresh_floor.py                  # every figure
    uv run python bench/refresh_floor.py --only floor     # one part: floor | history | market

Figures, each measured in fresh processes in this run:

- floor: `gpucat refresh --replay fixtures` into a new database against the bare import of the
  stack it needs (`python -c "import duckdb, polars, pandera.polars, httpx, bs4, lxml"`),
  alternating, medians of --reps pairs, after one refresh that fills a fresh cache folder
  (GPUCAT_CACHE_DIR: the validated reference data every later new database reads), shown apart;
- history: the same refresh into a database that holds one earlier refresh, and into a copy of
  it whose closed history was grown as if N more refreshes had run (--history, default 1,000):
  every versioned table gets N closed versions of each current row, one per synthetic hourly
  refresh before the real one, with their scrape_runs, rejected rows and per-load medians;
- market: a refresh of Vast alone whose two answers hold 10k and 100k offers in all, the real
  fixture offers replicated with fresh ids, and its peak RSS (wait4's maxrss of the process);
  the 100k answer is one body of real-sized offers, larger than the old 64 MB cap.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURES = ROOT / "fixtures"
STACK = "import duckdb, polars, pandera.polars, httpx, bs4, lxml"
VERSIONED = ("offer_versions", "interruption_rate_versions", "exchange_rate_versions", "scraped_storage_term_versions", "scraped_egress_term_versions")


def run(args: Sequence[str], env: dict[str, str]) -> tuple[float, float, dict]:
    """(wall s, peak RSS MB, the JSON it printed) of one command in a fresh process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(list(args), cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise SystemExit(f"bench: {' '.join(args)} failed:\n{err.read().decode()[-2000:]}")
        out.seek(0)
        text = out.read().decode().strip()
    try:
        report = json.loads(text) if text.startswith("{") else {}
    except ValueError:
        report = {}
    return wall, usage.ru_maxrss / 1024, report


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUCAT_")}
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    # The stack's modules are byte-compiled where they are installed; gpucat's own, in a checkout,
    # only once a run writes them. With this set (some sandboxes set it) every refresh compiled
    # about a hundred modules again (0.3 s) that no installed gpucat compiles: the first, cold run
    # writes them, as a first run anywhere does.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def gpucat() -> str:
    return str(Path(sys.executable).parent / "gpucat")


def refresh(db: Path, env: dict[str, str], replay: Path = FIXTURES, *extra: str) -> tuple[float, float, dict]:
    wall, rss, report = run([gpucat(), "refresh", "--replay", str(replay), "--json", "--db", str(db), *extra], env)
    failed = [row["source"] for row in report.get("sources", []) if row["status"] == "failed"]
    if failed:
        raise SystemExit(f"bench: refresh of {db.name} failed for {', '.join(failed)}")
    return wall, rss, report


def bench_floor(reps: int, work: Path, env: dict[str, str]) -> list[bool]:
    env = env | {"GPUCAT_CACHE_DIR": str(work / "cache")}
    cold = refresh(work / "floor-cold.duckdb", env)[0]
    stack, refreshes = [], []
    for i in range(reps):
        stack.append(run([sys.executable, "-c", STACK], env)[0])
        refreshes.append(refresh(work / f"floor-{i}.duckdb", env)[0])
    s, r = statistics.median(stack), statistics.median(refreshes)
    print(f"floor    refresh --replay fixtures, new database {r:6.2f} s   stack import {s:6.2f} s   ratio {r / s:4.2f}x (bar 2.5x)   "
          f"[refresh {', '.join(f'{x:.2f}' for x in refreshes)}; import {', '.join(f'{x:.2f}' for x in stack)}; first, cache empty {cold:.2f}]")  # fmt: skip
    return [r <= 2.5 * s]


def grow_history(db: Path, n: int) -> dict[str, int]:
    """N closed versions of every current row, as if N hourly refreshes had each changed it."""
    import duckdb

    con = duckdb.connect(str(db))
    try:
        con.execute("SET TimeZone = 'UTC'")
        for table in VERSIONED:
            con.execute(
                f"""INSERT INTO {table} BY NAME
                SELECT v.* REPLACE (v.content_hash || ':' || k AS content_hash, v.valid_from - to_hours(k + 1) AS valid_from,
                                    v.valid_from - to_hours(k) AS valid_to, v.scraped_at - to_hours(k + 1) AS scraped_at)
                FROM {table} AS v, range(1, $n + 1) AS r(k) WHERE v.valid_to IS NULL""",
                {"n": n},
            )
        con.execute(
            """INSERT INTO scrape_runs BY NAME SELECT s.* REPLACE (s.run_id || ':' || k AS run_id, s.started_at - to_hours(k) AS started_at,
                                                                  s.finished_at - to_hours(k) AS finished_at)
               FROM scrape_runs AS s, range(1, $n + 1) AS r(k)""",
            {"n": n},
        )
        con.execute("INSERT INTO rejected_rows BY NAME SELECT s.* REPLACE (s.run_id || ':' || k AS run_id) FROM rejected_rows AS s, range(1, $n + 1) AS r(k)", {"n": n})
        con.execute("INSERT INTO source_gpu_medians BY NAME SELECT m.* REPLACE (m.as_of - to_hours(k) AS as_of) FROM source_gpu_medians AS m, range(1, $n + 1) AS r(k)", {"n": n})
        con.execute("CHECKPOINT")
        return {table: con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in VERSIONED}  # type: ignore[index]
    finally:
        con.close()


def bench_history(reps: int, n: int, work: Path, env: dict[str, str]) -> list[bool]:
    base = work / "history-1.duckdb"
    refresh(base, env)
    grown = work / f"history-{n}.duckdb"
    shutil.copy(base, grown)
    # In a child: DuckDB's memory in this process would be copied into every later child's
    # peak RSS at fork (wait4 counts it), inflating the market figures.
    grow = subprocess.run([sys.executable, __file__, "--grow", str(grown), str(n)], capture_output=True, text=True, check=True)
    sizes = json.loads(grow.stdout.strip().splitlines()[-1])
    after_1, after_n = [], []
    for i in range(reps):
        for source, times in ((base, after_1), (grown, after_n)):
            copy = work / f"history-run-{i}.duckdb"
            shutil.copy(source, copy)
            times.append(refresh(copy, env)[0])
            copy.unlink()
    one, many = statistics.median(after_1), statistics.median(after_n)
    print(f"history  refresh after 1 refresh {one:6.2f} s   after {n:,} {many:6.2f} s   differs {abs(many - one) / one:4.0%} (bar 25%)   "
          f"[{sizes['offer_versions']:,} offer versions; after 1: {', '.join(f'{x:.2f}' for x in after_1)}; after {n:,}: {', '.join(f'{x:.2f}' for x in after_n)}]")  # fmt: skip
    return [abs(many - one) / one < 0.25]


def vast_capture(folder: Path, offers: int) -> Path:
    """A replay folder of Vast alone whose two answers hold `offers` offers in all: the fixture's
    real offers replicated (fresh ids and machine ids), half in each answer."""
    source = FIXTURES / "vast" / "vast-bundles"
    target = folder / "vast" / "vast-bundles"
    target.mkdir(parents=True)
    entries = [json.loads(line) for line in (source / "manifest.jsonl").read_text().splitlines() if line.strip()]
    lines = []
    for entry in entries:
        real = json.loads((source / entry["body"]).read_text())["offers"]
        path = target / entry["body"]
        with path.open("w") as out:
            out.write('{"offers": [')
            for i in range(offers // len(entries)):
                offer = dict(real[i % len(real)])
                offer["id"] = 10_000_000 + i
                offer["machine_id"] = 500_000 + i
                out.write(("," if i else "") + json.dumps(offer))
            out.write("]}")
        content = path.read_bytes()
        lines.append(json.dumps(entry | {"bytes": len(content), "body_sha256": hashlib.sha256(content).hexdigest()}))
        del content
    (target / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    # A new warehouse holds no exchange rates, so the refresh runs the rate sources first: their
    # real fixtures come along (small next to Vast's, but a replay without them fails).
    for rates in ("ecb",):
        shutil.copytree(FIXTURES / rates, folder / rates)
    return folder


def bench_market(sizes: Sequence[int], work: Path, env: dict[str, str]) -> list[bool]:
    verdicts = []
    for offers in sizes:
        capture = vast_capture(work / f"vast-{offers}", offers)
        body = max(p.stat().st_size for p in capture.rglob("*.json"))
        wall, rss, report = refresh(work / f"vast-{offers}.duckdb", env, capture, "-p", "vast-bundles")
        [row] = [r for r in report["sources"] if r["source"] == "vast-bundles"]
        print(f"market   {offers:>7,} Vast offers (largest answer {body / 1e6:5.1f} MB)   refresh {wall:6.2f} s   peak RSS {rss:5.0f} MB (bar 500 MB)   "
              f"{row['status']}: {row['rows_valid']:,} valid, {row['rows_rejected']:,} rejected")  # fmt: skip
        verdicts.append(row["status"] == "ok" and rss <= 500)
    return verdicts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--history", type=int, default=1000, help="synthetic refreshes of closed history")
    parser.add_argument("--market", default="10000,100000", help="Vast offer counts, comma-separated")
    parser.add_argument("--only", choices=("floor", "history", "market"))
    parser.add_argument("--grow", nargs=2, metavar=("DB", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.grow:
        print(json.dumps(grow_history(Path(args.grow[0]), int(args.grow[1]))))
        return 0
    env = cli_env()
    with tempfile.TemporaryDirectory(prefix="gpucat-floor-") as folder:
        work = Path(folder)
        verdicts: list[bool] = []
        if args.only in (None, "floor"):
            verdicts += bench_floor(args.reps, work, env)
        if args.only in (None, "history"):
            verdicts += bench_history(args.reps, args.history, work, env)
        if args.only in (None, "market"):
            verdicts += bench_market([int(x) for x in args.market.split(",")], work, env)
    # like reads_scale.py: a count, and a non-zero status when a bar is missed, so bench/run.py fails
    print(f"bars met: {sum(verdicts)} of {len(verdicts)}")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
