"""Every figure in the reviewed terms files cites a page and a day: a quote naming its column with
an https URL, and the row's verified_on. Pandera checks the same thing row by row; this walks every
figure cell of the files as they are, so a figure that slips past a check is named here."""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl
import pytest

from gpucat.schemas import evidence, null_reasons
from tests.terms.conftest import MODELS, read


def uncited(table: str, row: dict[str, Any]) -> list[str]:
    """The non-null figures of a row that no quote with an https page names, or all of them when
    the row has no valid verified_on."""
    figures = [c for c in MODELS[table].Config.metadata["figures"] if row.get(c) is not None]
    try:
        day = date.fromisoformat(row.get("verified_on") or "")
    except ValueError:
        return figures
    if not evidence.EARLIEST_VERIFIED_ON <= day <= date.today():
        return figures
    try:
        segments = evidence.segments(row["evidence"]) if row.get("evidence") else []
    except ValueError:  # a malformed segment (no https page, no quote) cites nothing
        return figures
    cited: set[str] = set()
    for segment in segments:
        if segment["url"].startswith("https://") and segment["quote"].strip():
            cited |= set(segment["columns"].split(","))
    return [c for c in figures if c not in cited]


@pytest.mark.parametrize("table", sorted(MODELS))
def test_every_reviewed_figure_cell_cites_a_page_and_a_day(table):
    rows = read(table).to_dicts()
    figures = sum(row[c] is not None for row in rows for c in MODELS[table].Config.metadata["figures"])
    assert figures > 0, table
    missing = {(row["provider"], row.get("product") or row.get("scope") or "*"): bad for row in rows if (bad := uncited(table, row))}
    assert missing == {}, table


RUNPOD = read("providers").filter(provider="runpod").row(0, named=True)
ALL_THREE = ["billing_increment_s", "stopped_instances_billed", "ssh"]
UNCITED = {
    "no evidence": ({"evidence": None}, ALL_THREE),
    "page not https": ({"evidence": 'billing_increment_s,stopped_instances_billed,ssh: "every minute" <http://docs.runpod.io/faq>'}, ALL_THREE),
    "no page": ({"evidence": 'billing_increment_s,stopped_instances_billed,ssh: "every minute"'}, ALL_THREE),
    "quote names another column": ({"evidence": 'ssh: "SSH" <https://docs.runpod.io/faq>'}, ["billing_increment_s", "stopped_instances_billed"]),
    "no verified_on": ({"verified_on": None}, ALL_THREE),
    "verified_on not a date": ({"verified_on": "last week"}, ALL_THREE),
    "verified_on in the future": ({"verified_on": "2999-01-01"}, ALL_THREE),
    "verified_on before the project": ({"verified_on": "2020-01-01"}, ALL_THREE),
}


@pytest.mark.parametrize(("change", "expected"), UNCITED.values(), ids=UNCITED.keys())
def test_uncited_names_each_figure_without_a_page_or_a_day(change, expected):
    figures = {c: None for c in MODELS["providers"].Config.metadata["figures"]}
    row = {**RUNPOD, **figures, "billing_increment_s": 60, "stopped_instances_billed": False, "ssh": True, "evidence": 'billing_increment_s,stopped_instances_billed: "charged every minute" <https://docs.runpod.io/get-started/billing-information> || ssh: "SSH" <https://docs.runpod.io/pods/configuration/use-ssh.md>'}
    assert uncited("providers", row) == []
    assert uncited("providers", {**row, **change}) == expected


def test_every_null_reason_says_where_it_was_looked_for():
    # not_published names the page that should state the figure; not_found says what was searched.
    rules = null_reasons.NullReasons.validate(pl.read_csv(null_reasons.CSV, infer_schema_length=None)).to_dicts()
    assert rules
    for rule in rules:
        if rule["reason"] == "not_published":
            assert (rule["reference_url"] or "").startswith("https://"), rule
        if rule["reason"] == "not_found":
            assert (rule["searches"] or "").strip(), rule
        date.fromisoformat(rule["verified_on"])

