"""What a huge, empty (sparse) body costs aws-pricelist: peak memory of its fetch and parse.

    uv run python bench/sparse_body.py [GB]      # default 2

A replay capture of aws-pricelist whose one body is a sparse file of GB gigabytes (`truncate`: zero
bytes, no line end), in three places: the region index, the all-region CSV, and a region CSV
after a valid header line (scanned in one process, the path a one-CPU worker takes). Each case
runs `pipeline.fetch_source` then `pipeline.parse_source` in a fresh process and prints how it
ended, its wall time and the process's peak RSS (VmHWM). A body must cost what is read, not
what is declared: the bound is a few tens of MB whatever the size.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HOST = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2"
INDEX_URL = f"{HOST}/current/region_index.json"
ALL_URL = f"{HOST}/current/index.csv"
REGION_URL = f"{HOST}/20261113194237/us-east-1/index.csv"
INDEX = json.dumps({"regions": {"us-east-1": {"currentVersionUrl": "/offers/v1.0/aws/AmazonEC2/20261113194237/us-east-1/index.json"}}}).encode()
HEADER = b'"SKU","OfferTermCode","RateCode","TermType","PriceDescription","EffectiveDate","StartingRange","EndingRange","Unit","PricePerUnit","Currency","Product Family","Location","Instance Type","vCPU","Memory","Tenancy","Operating System","CapacityStatus","GPU","MarketOption","Pre Installed S/W","Region Code"\n'

CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
from gpucat import pipeline
from gpucat.scrapers import get_source
from gpucat.schemas.settings import Settings
started = time.perf_counter()
with tempfile.TemporaryDirectory(prefix="gpucat-bench-") as work:
    options = pipeline.FetchOptions(workdir=Path(work), replay_dir=Path(sys.argv[1]), settings=Settings.from_env())
    source = get_source("aws-pricelist")
    try:
        items = pipeline.parse_source(source, pipeline.fetch_source(source, options).pages)
        outcome = f"parsed, {len(items)} items"
    except Exception as exc:
        outcome = f"refused: {type(exc).__name__}: {str(exc)[:160]}"
elapsed = time.perf_counter() - started
peak = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')) * 1024
print(json.dumps({"outcome": outcome, "seconds": round(elapsed, 1), "peak_rss_mb": round(peak / 1e6)}))
"""


def sparse(path: Path, head: bytes, size: int) -> str:
    """Write `head`, extend the file to `size` bytes with a hole; its sha256 (zeros hashed in memory, never read)."""
    path.write_bytes(head)
    os.truncate(path, size)
    digest, zeros, left = hashlib.sha256(head), bytes(8 << 20), size - len(head)
    while left:
        digest.update(zeros[: min(left, len(zeros))])
        left -= min(left, len(zeros))
    return digest.hexdigest()


def entry(url: str, body: Path, sha: str, content_type: str) -> str:
    return json.dumps({"body": body.name, "body_sha256": sha, "bytes": body.stat().st_size, "fetched_at": "2026-11-20T06:00:01+00:00",
                       "headers": {"content-type": content_type}, "method": "GET", "provider": "aws", "request_body_sha256": None,
                       "source": "aws-pricelist", "status": 200, "url": url})  # fmt: skip


def capture(root: Path, case: str, size: int) -> Path:
    folder = root / case / "aws" / "aws-pricelist"
    folder.mkdir(parents=True)
    index = folder / "region_index.json"
    lines = []
    if case == "index":
        lines.append(entry(INDEX_URL, index, sparse(index, b"", size), "application/json"))
    else:
        index.write_bytes(INDEX)
        lines.append(entry(INDEX_URL, index, hashlib.sha256(INDEX).hexdigest(), "application/json"))
        body = folder / "index.csv"
        head = b"" if case == "all-region csv" else HEADER
        lines.append(entry(ALL_URL if case == "all-region csv" else REGION_URL, body, sparse(body, head, size), "text/csv"))
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return root / case


def main() -> None:
    size = int(float(sys.argv[1] if len(sys.argv) > 1 else 2) * 10**9)
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="gpucat-sparse-") as work:
        for case, env in (("index", {}), ("all-region csv", {"GPUCAT_AWS_REGIONS": "*"}), ("header then hole", {"GPUCAT_PARSE_PROCESSES": "1"})):
            replay = capture(Path(work), case, size)
            done = subprocess.run([sys.executable, "-c", CHILD, str(replay)], cwd=root, capture_output=True, text=True,
                                  env={**os.environ, **env}, check=False)  # fmt: skip
            if done.returncode != 0:
                print(f"{case:>16}: the process died (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
                continue
            result = json.loads(done.stdout)
            print(f"{case:>16} ({size / 1e9:g} GB sparse): {result['seconds']:.1f} s, peak RSS {result['peak_rss_mb']:,} MB; {result['outcome']}")


if __name__ == "__main__":
    main()
