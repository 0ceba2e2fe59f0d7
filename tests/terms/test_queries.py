"""Terms loaded by the refresh, joined to offers, read side by side, and aged."""

from __future__ import annotations

import json
import re
import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from gpucat import pipeline, terms
from gpucat.cli import app
from gpucat.warehouse import db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def con(catalog_db):
    with duckdb.connect(str(catalog_db), read_only=True) as connection:
        yield connection


def test_refresh_loads_the_terms_tables(tmp_path):
    with db.connect(tmp_path / "t.duckdb") as connection:
        counts = pipeline.load_reference(connection)
        assert counts["providers"] == 24
        # Reviewed rows load into reviewed_*; with nothing scraped yet the views show exactly them.
        assert counts["reviewed_storage_terms"] == connection.execute("SELECT count(*) FROM storage_terms").fetchone()[0] > 24
        assert counts["reviewed_egress_terms"] == connection.execute("SELECT count(*) FROM egress_terms").fetchone()[0] > 24
        assert connection.execute("SELECT typeof(verified_on) FROM providers LIMIT 1").fetchone() == ("DATE",)


def test_every_provider_with_offers_has_terms(con):
    missing = con.execute(
        "SELECT DISTINCT provider FROM current_offers WHERE provider NOT IN (SELECT provider FROM providers)"
    ).fetchall()
    assert missing == []


def test_offer_terms_join_gives_each_offer_its_terms(con):
    cursor = con.execute(db.query_sql("offer_terms"))
    columns = [d[0] for d in cursor.description]
    rows = {r["offer_id"]: r for r in (dict(zip(columns, row, strict=True)) for row in cursor.fetchall())}
    assert len(rows) == con.execute("SELECT count(*) FROM current_offers").fetchone()[0]
    runpod = next(r for r in rows.values() if r["provider"] == "runpod")
    assert (runpod["billing_increment_s"], runpod["spot_notice_s"], runpod["spot_disk_fate"]) == (60, 5, "kept")
    # The cheapest storage that survives a stop is the network volume above 1 TB.
    assert (runpod["storage_kind"], runpod["storage_usd_per_gb_month"]) == ("network_volume", 0.05)
    aws = next(r for r in rows.values() if r["provider"] == "aws")
    assert (aws["egress_usd_per_gb"], aws["egress_free_gb_month"]) == (0.09, 100.0)


def test_the_documented_join_is_the_tested_one():
    sql = (ROOT / "warehouse" / "sql" / "offer_terms.sql").read_text()
    body = "\n".join(line for line in sql.splitlines() if not line.startswith("--"))
    assert body.strip() in (ROOT / "docs" / "data-model.md").read_text()


def test_side_by_side(con):
    rows = {r["provider"]: r for r in terms.side_by_side(con, today=date(2026, 12, 1)).records()}
    assert len(rows) == 24
    assert rows["vultr"]["billing_increment_s"] == 3600 and rows["vultr"]["stopped_instances_billed"] is True
    assert rows["nebius"]["egress_usd_per_gb"] == 0.0  # free internet egress is 0, not unknown
    assert rows["aws"]["egress_usd_per_gb"] == 0.09  # the first tier that charges
    assert rows["modal"]["egress_usd_per_gb"] is None  # not found stays unknown
    assert rows["azure"]["egress_usd_per_gb"] == 0.087  # after the free 100 GB, from the Retail Prices API (azure-terms)
    assert rows["oci"]["egress_usd_per_gb"] is None  # only a free allowance is known, not what follows
    assert rows["coreweave"]["oldest_verified_on"] == date(2026, 9, 20)
    # Only OVH's scraped volume price is stale: its capture is dated 2024-07-01, the week of the
    # bundled (real) ECB rates that its EUR prices are converted with.
    assert [p for p, r in rows.items() if r["stale"]] == ["ovh"]


def test_side_by_side_unknown_provider_is_a_user_error(con):
    from gpucat.schemas.errors import UserInputError

    with pytest.raises(UserInputError, match="no terms for provider nope"):
        terms.side_by_side(con, ["nope"])


def test_in_full_carries_every_row_with_its_evidence(con):
    (runpod,) = terms.in_full(con, ["runpod"])
    assert [s["product"] for s in runpod["storage"]] == [
        "Container disk", "Network volume (above 1 TB)", "Network volume (first 1 TB)", "Volume disk (/workspace)",
    ]  # fmt: skip
    assert all(re.search(r'<https://docs\.runpod\.io/', s["evidence"]) for s in runpod["storage"])
    (egress,) = runpod["egress"]
    assert (egress["scope"], egress["usd_per_gb"]) == ("internet", 0.0)
    assert "no additional fees for data ingress or egress" in egress["evidence"]


def test_stale_terms_are_those_older_than_180_days(con):
    assert terms.stale(con, today=date(2026, 12, 1)) == [
        {"provider": "ovh", "terms_table": "storage_terms", "item": "block: Block Storage classic", "verified_on": date(2024, 7, 1)}
    ]  # the OVH capture is dated the week of the bundled ECB rates
    later = terms.stale(con, today=date(2027, 3, 20))  # 181 days after the CoreWeave read of 2026-09-20
    assert {(r["provider"], r["terms_table"]) for r in later} >= {("coreweave", "providers"), ("coreweave", "storage_terms")}
    assert all(r["verified_on"] < date(2026, 9, 21) for r in later)
    ages = terms.age_by_provider(con, today=date(2027, 3, 20))
    assert ages["hyperstack"] == {"terms_verified_on": date(2026, 8, 26), "terms_stale": True}
    assert ages["runpod"] == {"terms_verified_on": date(2026, 12, 1), "terms_stale": False}


def test_status_flags_stale_terms(catalog_db, tmp_path):
    copy = tmp_path / "stale.duckdb"
    shutil.copy(catalog_db, copy)
    with duckdb.connect(str(copy)) as connection:
        connection.execute("UPDATE reviewed_storage_terms SET verified_on = DATE '2020-01-01' WHERE provider = 'aws'")
    result = CliRunner().invoke(app, ["status", "--json", "--db", str(copy)])
    assert result.exit_code == 0, result.output
    rows = {r["source"]: r for r in json.loads(result.stdout)}
    assert rows["aws-spot"]["terms_stale"] is True and rows["aws-spot"]["terms_verified_on"] == "2020-01-01"
    assert rows["runpod-graphql"]["terms_stale"] is False
    table = CliRunner().invoke(app, ["status", "--db", str(copy)])
    assert "terms older than 180 days: aws" in " ".join(table.stdout.split())
