"""The reviewed terms files, and the pandera checks that keep a figure from entering unsourced."""

from __future__ import annotations

from typing import Any

import pandera.errors
import polars as pl
import pytest

from gpucat.schemas import egress_terms, evidence, providers, storage_terms
from gpucat.scrapers import all_sources
from tests.terms.conftest import MODELS, read

# Every provider with an offer source has terms, even if only "not found" (from the registry).
PROVIDERS = sorted({s.provider for s in all_sources().values() if "offers" in s.tables})


def test_every_offer_provider_has_terms_in_every_table(terms_frames):
    for table, frame in terms_frames.items():
        assert set(PROVIDERS) <= set(frame["provider"].unique()), table


def test_evidence_segments_quote_https_pages(terms_frames):
    for table, frame in terms_frames.items():
        for cell in frame["evidence"].drop_nulls():
            for segment in evidence.segments(cell):
                assert segment["quote"].strip() and segment["url"].startswith("https://"), (table, segment)
                assert set(segment["columns"].split(",")) <= set(frame.columns), (table, segment)


def test_transcribed_prices_convert_as_documented(terms_frames):
    # RunPod quotes GB-months, Nebius GiB-months, Hyperstack GB-hours: one column, one unit.
    storage = terms_frames["storage_terms"].filter(pl.col("kind") != "object_storage")
    price = dict(zip(storage["product"], storage["usd_per_gb_month"], strict=True))
    assert price["Volume disk (/workspace)"] == 0.10
    assert price["Shared Filesystem"] == pytest.approx(0.08 / 1.073741824, abs=1e-6)
    assert price["Cloud-SSD volume"] == pytest.approx(0.000096774 * 730, abs=1e-6)


def one_row(table: str, **where: Any) -> dict[str, Any]:
    frame = read(table).filter(*(pl.col(k) == v for k, v in where.items()))
    assert frame.height == 1, where
    return frame.row(0, named=True)


def rejects(table: str, rows: list[dict[str, Any]]) -> None:
    frame = pl.DataFrame(rows, schema=read(table).schema)
    with pytest.raises((pandera.errors.SchemaError, pandera.errors.SchemaErrors)):
        MODELS[table].validate(frame, lazy=True)


RUNPOD = {"provider": "runpod"}
# Evidence that names every figure, so a case fails on the check it is about, not on provenance.
ALL_QUOTED = f'{",".join(providers.FIGURES)}: "quoted" <https://docs.runpod.io/faq>'
PROVIDER_BAD = {
    "no source_url": {"source_url": None},
    "not https": {"source_url": "http://docs.runpod.io/faq"},
    "figure without evidence": {"evidence": None},
    "figure not named in evidence": {"evidence": 'billing_increment_s: "charged every minute" <https://docs.runpod.io/faq>'},
    "malformed evidence": {"evidence": "billing_increment_s, spot_offered, spot_notice_s, spot_disk_fate: every minute"},
    "increment of 0": {"billing_increment_s": 0},
    "negative increment": {"billing_increment_s": -60},
    "negative notice": {"spot_notice_s": -5},
    "notice without spot": {"spot_offered": False},
    "minimum below one increment": {"min_charge_s": 30, "evidence": ALL_QUOTED},
    "bandwidth without fabric": {"fabric_gbps_per_node": 400.0, "evidence": ALL_QUOTED},
    "unknown fabric": {"fabric": "myrinet", "evidence": ALL_QUOTED},
    "unknown price basis": {"price_basis": "per_minute", "evidence": ALL_QUOTED},
    "verified in the future": {"verified_on": "2999-01-01"},
    "not a date": {"verified_on": "last week"},
    "unexplained unsourced row": {c: None for c in (*providers.FIGURES, "evidence", "notes")},
}


@pytest.mark.parametrize("change", PROVIDER_BAD.values(), ids=PROVIDER_BAD.keys())
def test_providers_rejects(change):
    rejects("providers", [{**one_row("providers", **RUNPOD), **change}])


@pytest.mark.parametrize(("table", "where"), [("providers", RUNPOD), ("providers", {"provider": "modal"})])
def test_the_rows_the_bad_cases_start_from_pass(table, where):
    row = one_row(table, **where)
    assert MODELS[table].validate(pl.DataFrame([row], schema=read(table).schema)).height == 1


def test_a_fully_quoted_row_passes():
    row = {**one_row("providers", **RUNPOD), "evidence": ALL_QUOTED}
    assert providers.ProviderTerms.validate(pl.DataFrame([row], schema=read("providers").schema)).height == 1


def test_providers_rejects_a_duplicate_provider():
    row = one_row("providers", **RUNPOD)
    rejects("providers", [row, row])


VOLUME = {"provider": "runpod", "product": "Volume disk (/workspace)"}
STORAGE_BAD = {
    "no source_url": {"source_url": None},
    "negative price": {"usd_per_gb_month": -0.1, "original_price": -0.1},
    "price not its original": {"usd_per_gb_month": 0.2},
    "original without unit": {"original_unit": None},
    "unknown unit": {"original_unit": "GB-year"},
    "USD without original": {"original_price": None, "original_currency": None, "original_unit": None},
    "survives terminate but not stop": {"persists_on_terminate": True, "persists_on_stop": False},
    "stopped price not billed": {"billed_while_stopped": False},
    "unknown kind": {"kind": "tape"},
    "figure without evidence": {"evidence": None},
    "zero throughput": {"read_throughput_mb_s": 0.0},
}


@pytest.mark.parametrize("change", STORAGE_BAD.values(), ids=STORAGE_BAD.keys())
def test_storage_terms_rejects(change):
    rejects("storage_terms", [{**one_row("storage_terms", **VOLUME), **change}])


AWS_SCHEDULE = [one_row("egress_terms", provider="aws", scope="internet", tier=t) for t in (1, 2)]
EGRESS_BAD = {
    "from above to": {1: {"from_gb": 20000.0}},
    "from equals to": {1: {"from_gb": 10000.0}},
    "negative price": {1: {"usd_per_gb": -0.09, "original_price": -0.09}},
    "tier 0": {0: {"tier": 0}},
    "gap between tiers": {1: {"from_gb": 200.0}},
    "duplicate tier": {1: {"tier": 1}},
    "no source_url": {0: {"source_url": None}},
    "unknown scope": {0: {"scope": "moon"}},
    "negative allowance": {0: {"free_allowance_gb_month": -100.0}},
}


@pytest.mark.parametrize("changes", EGRESS_BAD.values(), ids=EGRESS_BAD.keys())
def test_egress_terms_rejects(changes):
    rows = [{**row, **changes.get(i, {})} for i, row in enumerate(AWS_SCHEDULE)]
    rejects("egress_terms", rows)


def test_a_good_schedule_passes():
    assert egress_terms.EgressTerms.validate(pl.DataFrame(AWS_SCHEDULE, schema=read("egress_terms").schema)).height == 2


def test_an_unsourced_row_with_a_note_passes():
    row = {**one_row("storage_terms", provider="modal"), "usd_per_gb_month": None}
    assert storage_terms.StorageTerms.validate(pl.DataFrame([row], schema=read("storage_terms").schema)).height == 1
