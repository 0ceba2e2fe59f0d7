"""bench/terms_coverage.py: the sourced/null figure counts that issue 8's closing note reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpucat.schemas import egress_terms, storage_terms
from tests.terms.conftest import MODELS

SCRAPED_FIGURES = {
    "scraped_storage_terms": storage_terms.ScrapedStorageTerms.Config.metadata["figures"],
    "scraped_egress_terms": egress_terms.ScrapedEgressTerms.Config.metadata["figures"],
}

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


def test_counts_the_scraped_terms_sources_and_their_fixture_rows():
    from gpucat.scrapers import all_sources

    out = subprocess.run([sys.executable, str(SCRIPT), "--json"], check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    terms_sources = {n for n, s in all_sources().items() if any(t.startswith("scraped_") for t in s.tables)}
    assert terms_sources and {n for ns in report["machine_readable"]["scraped_sources"].values() for n in ns} == terms_sources
    for table, counts in report["scraped_from_fixtures"].items():
        assert set(counts["sources"]) <= terms_sources and counts["rows"] == sum(counts["sources"].values()) > 0, table
        assert counts["sourced"] > 0 and counts["sourced"] + counts["null"] == counts["rows"] * len(SCRAPED_FIGURES[table]), table


def test_checklist_says_per_provider_where_each_item_stands():
    out = subprocess.run([sys.executable, str(SCRIPT), "--json"], check=True, capture_output=True, text=True).stdout
    checklist = json.loads(out)["checklist"]
    statuses = {"scraped", "reviewed", "not_published", "not_found", "not_applicable"}
    assert set(checklist) == set(json.loads(out)["providers"])
    for provider, items in checklist.items():
        assert len(items) == 6 and all(set(v.values()) <= statuses for v in items.values()), provider
    # AWS: the disk price comes from its price list, the stop behaviour from the reviewed EBS row.
    assert checklist["aws"]["storage survives a stop"] == {"persists_on_stop": "reviewed", "billed_while_stopped": "reviewed"}
    assert checklist["aws"]["storage price"] == {"usd_per_gb_month": "scraped"}
