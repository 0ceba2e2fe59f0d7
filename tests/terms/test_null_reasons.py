"""Why a NULL terms figure is NULL: the rules file, the derived reasons, and where they show."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandera.errors
import polars as pl
import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.schemas import null_reasons

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "terms_coverage.py"
GOOD = {
    "provider": "acme", "table": "providers", "item": "*", "columns": "spot_notice_s", "reason": "not_found",
    "reference_url": None, "searches": "docs corpus 'acme spot notice'", "verified_on": "2026-12-02", "notes": None,
}  # fmt: skip


def test_the_rules_file_is_valid():
    assert null_reasons.read_rules()


@pytest.mark.parametrize(
    "change",
    [
        {"reason": "unknown"},  # not one of the three
        {"reason": "not_published", "reference_url": None},  # which page should have said it?
        {"reason": "not_found", "searches": None},  # what was searched?
        {"reason": "not_found", "searches": ""},
        {"columns": "spot_notice_s colour"},  # not a figure of the table
        {"table": "offers"},
        {"reference_url": "http://insecure.example"},
    ],
)
def test_a_rule_without_its_backing_is_refused(change):
    with pytest.raises(pandera.errors.SchemaError):
        null_reasons.NullReasons.validate(pl.DataFrame([{**GOOD, **change}]))


def test_a_duplicate_rule_is_refused():
    with pytest.raises(pandera.errors.SchemaError):
        null_reasons.NullReasons.validate(pl.DataFrame([GOOD, GOOD]))


RULES = [
    {**GOOD, "columns": "*", "searches": "wide"},
    {**GOOD, "columns": "jupyter", "reason": "not_published", "reference_url": "https://acme.example/docs", "searches": None},
]


def test_the_most_specific_rule_wins_and_the_row_itself_says_what_does_not_apply():
    row = {"provider": "acme", **dict.fromkeys(null_reasons.TABLES["providers"][0]), "spot_offered": False, "multi_node": True, "ssh": True}
    (reasons,) = null_reasons.explain("providers", [row], RULES)
    assert reasons["spot_notice_s"] == {"reason": "not_applicable", "why": "no spot capacity"}  # derived beats the rules
    assert reasons["jupyter"] == {"reason": "not_published", "reference_url": "https://acme.example/docs", "verified_on": "2026-12-02"}
    assert reasons["billing_increment_s"] == {"reason": "not_found", "searches": "wide", "verified_on": "2026-12-02"}
    assert "ssh" not in reasons and "spot_offered" not in reasons  # filled figures need no reason
    (other,) = null_reasons.explain("providers", [{**row, "provider": "other"}], RULES)
    assert other["billing_increment_s"] == {"reason": "unexplained"}


def test_egress_schedules_end_open_and_free_traffic_has_no_allowance():
    tiers = [
        {"provider": "acme", "scope": "internet", "tier": 1, "from_gb": 0.0, "to_gb": 100.0, "usd_per_gb": 0.1, "original_price": 0.1, "free_allowance_gb_month": 5.0},
        {"provider": "acme", "scope": "internet", "tier": 2, "from_gb": 100.0, "to_gb": None, "usd_per_gb": 0.05, "original_price": 0.05, "free_allowance_gb_month": 5.0},
        {"provider": "acme", "scope": "in_region", "tier": 1, "from_gb": 0.0, "to_gb": None, "usd_per_gb": 0.0, "original_price": None, "free_allowance_gb_month": None},
    ]
    assert null_reasons.explain("egress_terms", tiers, []) == [
        {},
        {"to_gb": {"reason": "not_applicable", "why": "the last tier is open-ended"}},
        {
            "to_gb": {"reason": "not_applicable", "why": "the last tier is open-ended"},
            "original_price": {"reason": "not_applicable", "why": "nothing is charged"},
            "free_allowance_gb_month": {"reason": "not_applicable", "why": "the traffic is free without limit"},
        },
    ]


def test_the_bench_explains_every_null_of_the_merged_catalog():
    report = json.loads(subprocess.run([sys.executable, str(SCRIPT), "--json"], check=True, capture_output=True, text=True).stdout)
    for table, counts in report["catalog"].items():
        assert counts["unexplained"] == 0 and counts["unexplained_cells"] == [], table
        assert counts["null"] == counts["not_published"] + counts["not_found"] + counts["not_applicable"], table
        assert counts["sourced"] > 0


def test_providers_json_says_why_each_blank_is_blank(catalog_db):
    result = CliRunner().invoke(app, ["providers", "--json", "-p", "lambda,verda", "--db", str(catalog_db)])
    assert result.exit_code == 0, result.output
    lam, verda = json.loads(result.stdout)
    assert lam["null_reasons"]["stopped_instances_billed"]["reason"] == "not_applicable"
    assert verda["null_reasons"]["billing_increment_s"] == {
        "reason": "not_published",
        "reference_url": "https://docs.verda.com/welcome-to-verda/pricing-and-billing",
        "verified_on": "2026-12-01",
        "notes": "the pricing and billing page only links the price list ('Long-term contracts are paid up-front.')",
    }
    blanks = {k for k, v in verda.items() if k in null_reasons.TABLES["providers"][0] and v is None}
    assert blanks == set(verda["null_reasons"])  # every blank, and only blanks, explained
    for row in verda["storage"] + verda["egress"]:
        assert all(why["reason"] in null_reasons.REASONS for why in row["null_reasons"].values())
