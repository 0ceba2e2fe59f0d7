"""The precedence rule between scraped terms (aws-terms, azure-terms) and the reviewed CSV rows."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from gpucat import pipeline
from gpucat.schemas import egress_terms, storage_terms
from gpucat.scrapers import all_sources
from gpucat.warehouse import db
from tests.conftest import FIXTURES

TERMS_SOURCES = [s for s in all_sources().values() if "scraped_storage_terms" in s.tables]


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("terms") / "t.duckdb"
    sources = [s for s in all_sources().values() if s.loads_first] + TERMS_SOURCES  # OVH quotes EUR
    runs = pipeline.refresh_catalog(path, sources, replay_dir=FIXTURES)
    assert [r.status for r in runs] == ["ok"] * len(sources), [r.error for r in runs]
    with db.connect(path) as connection:
        yield connection


def frame(con, sql: str) -> pl.DataFrame:
    cursor = con.execute(sql)
    columns = [d[0] for d in cursor.description]
    return pl.DataFrame([dict(zip(columns, row, strict=True)) for row in cursor.fetchall()], schema=columns, orient="row", infer_schema_length=None)


def reviewed(path: Path) -> pl.DataFrame:
    return pl.read_csv(path, infer_schema_length=None)


def test_the_sources_cover_aws_and_azure():
    assert {s.provider for s in TERMS_SOURCES} >= {"aws", "azure"}


def test_scraped_rows_replace_the_reviewed_rows_of_their_provider_and_kind(con):
    rows = frame(con, "SELECT * FROM storage_terms WHERE provider = 'aws' AND kind = 'block' ORDER BY product")
    assert rows.select("product", "usd_per_gb_month", "origin", "region").rows() == [
        ("EBS gp2", 0.1, "aws-terms", "us-east-1"),
        ("EBS gp3", 0.08, "aws-terms", "us-east-1"),
    ]
    # what the price list lacks comes from the reviewed "EBS gp3" row, with its quotes
    review = reviewed(storage_terms.CSV).filter((pl.col("provider") == "aws") & (pl.col("product") == "EBS gp3")).row(0, named=True)
    for row in rows.iter_rows(named=True):
        for column in ("persists_on_stop", "persists_on_terminate", "billed_while_stopped"):
            assert row[column] == review[column]
        assert 'persists_on_stop,persists_on_terminate: "' in row["evidence"] and 'billed_while_stopped,usd_per_gb_month_stopped: "' in row["evidence"]
        assert "original_price" not in row["evidence"].split(" || ", 3)[-1]  # the reviewed EUR quote is not carried
        assert str(row["verified_on"]) == min("2026-11-20", review["verified_on"])


def test_scraped_egress_tiers_replace_the_reviewed_schedule_and_keep_its_allowance(con):
    rows = frame(con, "SELECT * FROM egress_terms WHERE provider = 'aws' AND scope = 'internet' ORDER BY tier")
    assert rows.select("tier", "from_gb", "to_gb", "usd_per_gb", "free_allowance_gb_month", "origin").rows() == [
        (1, 0.0, 10240.0, 0.09, 100.0, "aws-terms"),
        (2, 10240.0, 51200.0, 0.085, 100.0, "aws-terms"),
        (3, 51200.0, 153600.0, 0.07, 100.0, "aws-terms"),
        (4, 153600.0, None, 0.05, 100.0, "aws-terms"),
    ]
    assert all(e.endswith("<https://wring.co/blog/aws-data-transfer-pricing-guide>") and ' || free_allowance_gb_month: "' in e for e in rows["evidence"])


def test_azure_disks_take_the_reviewed_managed_disk_behaviour(con):
    rows = frame(con, "SELECT * FROM storage_terms WHERE provider = 'azure' AND kind = 'block' ORDER BY usd_per_gb_month")
    assert rows["product"].to_list() == [
        "Standard SSD E10 LRS", "Standard SSD E30 LRS", "Premium SSD P30 LRS", "Premium SSD P20 LRS", "Premium SSD P10 LRS", "Premium SSD P6 LRS",
    ]  # fmt: skip
    assert set(rows["origin"]) == {"azure-terms"} and set(rows["region"]) == {"eastus"}
    assert set(rows["persists_on_terminate"]) == {True} and set(rows["billed_while_stopped"]) == {True}
    assert all('stop/terminate behaviour from the reviewed row "Managed disk"' in n for n in rows["notes"])
    egress = frame(con, "SELECT * FROM egress_terms WHERE provider = 'azure' AND scope = 'internet' ORDER BY tier")
    assert egress.select("tier", "usd_per_gb", "free_allowance_gb_month").rows()[:2] == [(1, 0.0, 100.0), (2, 0.087, 100.0)]
    assert egress.height == 6 and egress["to_gb"].to_list()[-1] is None


def test_cost_reads_the_merged_terms(con):
    from gpucat.cost.terms import load_terms

    terms = load_terms(con)
    # each product is a choice of its own: a job keeps its data on gp3 (the disk `providers` shows)
    assert [(t.product, t.usd_per_gb_month) for t in terms.storage["aws"]] == [("block: EBS gp2", 0.1), ("block: EBS gp3", 0.08)]
    assert [(r["tier"], r["usd_per_gb"]) for r in terms.egress["azure"]][:2] == [(1, 0.0), (2, 0.087)]


def test_a_scraped_disk_is_charged_its_own_rate_while_stopped_where_the_reviewed_quote_says_so(con):
    # the reviewed rows name usd_per_gb_month_stopped in the quote that the disk keeps being charged
    rows = frame(con, "SELECT * FROM storage_terms WHERE origin <> 'reviewed' ORDER BY provider, product")
    assert rows.height > 10
    assert rows.filter(pl.col("usd_per_gb_month_stopped") != pl.col("usd_per_gb_month")).height == 0
    gp3 = rows.filter(product="EBS gp3").row(0, named=True)
    assert (gp3["usd_per_gb_month"], gp3["usd_per_gb_month_stopped"], gp3["billed_while_stopped"]) == (0.08, 0.08, True)
    assert 'billed_while_stopped,usd_per_gb_month_stopped: "Volume storage for all EBS volume types is charged by the amount of GB you provision per month until you release the storage." <https://aws.eu/ebs/pricing>' in gp3["evidence"]
    assert gp3["notes"].endswith("stopped rate = its own rate: the reviewed row's quote says a stopped instance's disk keeps being charged")


def test_without_that_quote_a_scraped_disk_has_no_stopped_rate(con):
    con.execute("BEGIN")
    try:
        con.execute("UPDATE reviewed_storage_terms SET evidence = replace(evidence, ',usd_per_gb_month_stopped:', ':') WHERE provider = 'aws'")
        rows = frame(con, "SELECT * FROM storage_terms WHERE provider = 'aws' AND kind = 'block'")
        assert rows["usd_per_gb_month_stopped"].to_list() == [None, None]
        assert set(rows["billed_while_stopped"]) == {True}  # still billed, at a rate nobody quoted
        assert not any("usd_per_gb_month_stopped" in e for e in rows["evidence"])
    finally:
        con.execute("ROLLBACK")


def test_rows_no_source_covers_are_the_reviewed_rows_unchanged(con):
    for table, model in (("storage_terms", storage_terms), ("egress_terms", egress_terms)):
        shown = frame(con, f"SELECT * EXCLUDE (origin, region) FROM {table} WHERE origin = 'reviewed'")
        covered = frame(con, f"SELECT DISTINCT provider, {'kind' if table == 'storage_terms' else 'scope'} FROM {table} WHERE origin <> 'reviewed'")
        expected = reviewed(model.CSV).join(covered, on=covered.columns, how="anti")
        assert shown.height == expected.height > 20
        assert set(shown["provider"]) == set(expected["provider"])


@pytest.mark.parametrize(("table", "model"), [("storage_terms", storage_terms.StorageTerms), ("egress_terms", egress_terms.EgressTerms)])
def test_the_merged_views_pass_the_reviewed_models(con, table, model):
    rows = frame(con, f"SELECT * EXCLUDE (origin, region) FROM {table}").with_columns(pl.col("verified_on").cast(pl.String))
    assert model.validate(rows).height == rows.height


def test_a_reference_reload_keeps_the_scraped_rows(con):
    before = frame(con, "SELECT * FROM storage_terms ORDER BY ALL")
    pipeline.load_reference(con)
    assert frame(con, "SELECT * FROM storage_terms ORDER BY ALL").equals(before)
    assert con.execute("SELECT count(*) FROM scraped_storage_terms WHERE provider = 'aws'").fetchone() == (2,)


def test_without_scraped_rows_the_views_are_the_reviewed_rows(tmp_path):
    with db.connect(tmp_path / "t.duckdb") as connection:
        pipeline.load_reference(connection)
        origins = connection.execute("SELECT DISTINCT origin FROM storage_terms UNION SELECT DISTINCT origin FROM egress_terms").fetchall()
        assert origins == [("reviewed",)]


GOOD_TIER = {
    "provider": "aws", "scope": "internet", "region": "us-east-1", "tier": 1, "from_gb": 0.0, "to_gb": None, "usd_per_gb": 0.09,
    "original_price": 0.09, "original_unit": "GB", "free_allowance_gb_month": None, "source": "aws-terms",
    "source_url": "https://pricing.us-east-1.amazonaws.com/x.csv", "scraped_at": None, "verified_on": "2026-11-20",
    "evidence": 'from_gb,to_gb,usd_per_gb,original_price: "SKU X, 0-Inf GB at 0.09" <https://pricing.us-east-1.amazonaws.com/x.csv>',
    "notes": None,
}  # fmt: skip


@pytest.mark.parametrize(
    "change",
    [
        {"source_url": ""},
        {"source_url": "http://pricing.us-east-1.amazonaws.com/x.csv"},
        {"usd_per_gb": -0.09},
        {"evidence": None},  # figures without a quote
        {"evidence": "SKU X costs 0.09"},  # not a quote segment
        {"region": ""},
        {"tier": 0},
    ],
)
def test_the_scraped_models_reject_what_the_reviewed_ones_reject(change):
    from datetime import UTC, datetime

    from gpucat.schemas.records import ScrapedEgressTier
    from gpucat.schemas.validate import validate

    row = {**GOOD_TIER, "scraped_at": datetime(2026, 11, 20, tzinfo=UTC)}
    assert validate("scraped_egress_terms", [ScrapedEgressTier(**row)]).frame.height == 1
    result = validate("scraped_egress_terms", [ScrapedEgressTier(**{**row, **change})])
    assert result.frame.height == 0 and len(result.rejected) == 1
