"""Parse time and peak memory of the AWS price list parser on all-region-sized files.

Generates synthetic CSVs in the real layout (bench/aws_pricelist_gen.py), then parses each in a
fresh process and reports wall time, throughput and peak RSS. Memory should stay flat as the
file grows: the parser streams in blocks.

    uv run python bench/aws_pricelist_parse.py                     # 2M and 4M rows
    uv run python bench/aws_pricelist_parse.py --rows 2000000 --rows 8000000
    uv run python bench/aws_pricelist_parse.py --keep bench/out    # keep the files for another run

The generated files (1.5 GB per 2M rows) go to a temporary directory deleted at the end, unless
`--keep DIR` names where to keep them (an existing file there is reused). `bench/run.py` gives the
figure against gpuhunt's parser.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(path: Path) -> dict[str, float]:
    """Runs in a child process so that only the parser's memory is counted."""
    sys.path.insert(0, str(HERE.parent))
    from gpucat.scrapers import aws_pricelist
    from gpucat.scrapers.normalize import normalize

    baseline_mb = _vm_hwm_mb()
    started = time.perf_counter()
    offers = rejected = 0
    with path.open("rb") as body:
        items = aws_pricelist.parse(body, url="https://pricing.us-east-1.amazonaws.com/bench.csv", fetched_at=datetime.now(UTC))
        for item in normalize(items):
            if isinstance(item, dict):
                offers += 1
            else:
                rejected += 1
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        # Children (scan processes of a big file): ru_maxrss, an upper bound.
        "peak_rss_mb": _vm_hwm_mb() + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "baseline_rss_mb": baseline_mb,
        "offers": offers,
        "rejected": rejected,
    }


def _vm_hwm_mb() -> float:
    """This process's peak RSS. Not ru_maxrss: Linux carries the parent's RSS at fork into it across exec."""
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, action="append", help="rows per generated file (repeatable)")
    parser.add_argument("--keep", type=Path, help="keep the generated files in this directory (default: delete them)")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.keep, args.rows)
        return
    with tempfile.TemporaryDirectory(prefix="gpucat-bench-") as out:
        run(Path(out), args.rows)


def run(out: Path, row_counts: list[int] | None) -> None:
    sys.path.insert(0, str(HERE))
    import aws_pricelist_gen

    print(f"{'rows':>10} {'file MB':>9} {'parse s':>8} {'MB/s':>7} {'rows/s':>10} {'peak RSS MB':>12} {'(baseline)':>10} {'GPU offers':>10}")
    for rows in row_counts or [2_000_000, 4_000_000]:
        path = out / f"aws-pricelist-{rows}.csv"
        if not path.exists():
            aws_pricelist_gen.generate(str(path), rows, seed=0)
        size_mb = path.stat().st_size / 1e6
        result = json.loads(
            subprocess.run([sys.executable, __file__, "--measure", str(path)], check=True, capture_output=True, text=True).stdout
        )
        print(
            f"{rows:>10,} {size_mb:>9,.0f} {result['seconds']:>8.1f} {size_mb / result['seconds']:>7.0f} "
            f"{rows / result['seconds']:>10,.0f} {result['peak_rss_mb']:>12.0f} {result['baseline_rss_mb']:>10.0f} {result['offers']:>10,}"
        )


if __name__ == "__main__":
    main()
