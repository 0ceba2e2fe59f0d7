"""What parsing a provider's HTML page costs at the size limit, and past it.

    uv run python bench/html_bound.py

Each case runs `scrapers._html.page` in a fresh process on a generated page of pricing-table rows
and prints its wall time and the process's peak RSS (VmHWM): a page at MAX_HTML_BYTES (parsed),
and a 50 MB page (refused before parsing). The issue's bound: 50 MB within 1 GB and 30 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROW = "<tr><td>NVIDIA H100 SXM</td><td>80 GB</td><td>8</td><td>$2.49</td><td>&#x2014;</td></tr>\n"

CHILD = r"""
import io, json, sys, time
from gpucat.scrapers import _html
from gpucat.schemas.errors import ParseError
body = open(sys.argv[1], 'rb')
started = time.perf_counter()
try:
    doc = _html.page(body, "bench page")
    outcome = f"parsed, {len(doc.find_all('tr')):,} rows"
except ParseError as exc:
    outcome = f"refused: {exc}"
elapsed = time.perf_counter() - started
peak = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')) * 1024
print(json.dumps({"outcome": outcome, "seconds": round(elapsed, 2), "peak_rss_mb": round(peak / 1e6)}))
"""


def page_of(size: int, folder: Path) -> Path:
    path = folder / f"page-{size}.html"
    head, tail = "<html><body><h2>Pricing</h2><table>\n", "</table></body></html>\n"
    rows = (size - len(head) - len(tail)) // len(ROW)
    path.write_text(head + ROW * rows + tail)
    return path


def main() -> None:
    from gpucat.scrapers._html import MAX_HTML_BYTES

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as work:
        for label, size in (("at the limit", MAX_HTML_BYTES), ("50 MB", 50 * 10**6)):
            path = page_of(size, Path(work))
            done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=root, capture_output=True, text=True, check=True)
            result = json.loads(done.stdout)
            print(f"{label:>13} ({path.stat().st_size / 1e6:.1f} MB): {result['seconds']:.2f} s, peak RSS {result['peak_rss_mb']:,} MB; {result['outcome']}")


if __name__ == "__main__":
    main()
