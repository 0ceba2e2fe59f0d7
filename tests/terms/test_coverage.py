"""bench/terms_coverage.py: the sourced/null figure counts that issue 8's closing note reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.terms.conftest import MODELS

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "terms_coverage.py"


def test_counts_every_figure_cell_once(terms_frames):
    out = subprocess.run([sys.executable, str(SCRIPT), "--json"], check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    for table, frame in terms_frames.items():
        figures = MODELS[table].Config.metadata["figures"]
        filled = sum(frame[column].is_not_null().sum() for column in figures)
        assert report["tables"][table] == {
            "rows": frame.height,
            "rows_with_evidence": frame["evidence"].is_not_null().sum(),
            "sourced": filled,
            "null": frame.height * len(figures) - filled,
            "share": round(filled / (frame.height * len(figures)), 3),
        }
        per_provider = sum(counts[table]["sourced"] for counts in report["providers"].values() if table in counts)
        assert per_provider == filled, table
    assert set(report["machine_readable"]) == {"scraped_sources", "stated_in_notes"}
