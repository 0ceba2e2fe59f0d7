"""One truth per provider: a fallback loads only when its primary cannot, and no offer key or
(provider, instance, market) is held current by two sources."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import duckdb
import pytest

from gpucat import pipeline
from gpucat.schemas.validate import validate
from gpucat.scrapers import all_sources, get_source, siblings
from gpucat.scrapers.capture import rehash
from gpucat.warehouse import db
from gpucat.warehouse.load import RunRecord, load_source
from tests.conftest import FIXTURES
from tests.factories import offer

LAMBDA = ["lambda-instance-types", "lambda-page"]


def refresh(con: duckdb.DuckDBPyConnection, names: list[str], replay: Path = FIXTURES) -> dict[str, tuple[str, str | None]]:
    with tempfile.TemporaryDirectory() as work:
        runs = pipeline.refresh_sources(con, [get_source(n) for n in names], pipeline.FetchOptions(workdir=Path(work), replay_dir=replay), prerequisites=False)
    return {run.source: (run.status, run.error) for run in runs}


def current_sources(con: duckdb.DuckDBPyConnection, provider: str) -> dict[str, int]:
    return dict(con.execute("SELECT source, count(*) FROM current_offers WHERE provider = ? GROUP BY source", [provider]).fetchall())


def test_the_registry_declares_lambda_page_as_the_apis_fallback():
    assert get_source("lambda-page").fallback_for == "lambda-instance-types"
    assert siblings("lambda-instance-types") == {"lambda-page"} and siblings("lambda-page") == {"lambda-instance-types"}
    for source in all_sources().values():  # a fallback stands in for a registered source of its own provider
        if source.fallback_for:
            assert get_source(source.fallback_for).provider == source.provider


def test_on_the_whole_replay_no_provider_instance_and_market_is_held_twice(catalog_db):
    # An instance is its type in a region and pricing tier (RunPod sells one type in two clouds).

    with db.connect(catalog_db, read_only=True) as con:
        twice_by_key = con.execute("SELECT provider, offer_id FROM current_offers GROUP BY ALL HAVING count(*) > 1").fetchall()
        twice_by_instance = con.execute(
            "SELECT provider, instance_type, region, market, tier FROM current_offers GROUP BY ALL HAVING count(*) > 1"
        ).fetchall()
        # The same machine from two endpoints has two names (gpu_1x_h100_pcie, "1x H100 PCIe 80 GB"),
        # so one truth also means one source per provider and market.
        two_sources = con.execute(
            "SELECT provider, market, list(DISTINCT source) FROM current_offers GROUP BY ALL HAVING count(DISTINCT source) > 1"
        ).fetchall()
        lambda_runs = con.execute("SELECT source, status, error FROM scrape_runs WHERE provider = 'lambda' ORDER BY source").fetchall()
        lambda_rows = con.execute("SELECT DISTINCT source FROM current_offers WHERE provider = 'lambda'").fetchall()
    assert (twice_by_key, twice_by_instance, two_sources) == ([], [], [])
    assert lambda_runs == [
        ("lambda-instance-types", "ok", None),
        ("lambda-page", "skipped", "fallback of lambda-instance-types, whose last run is ok: one source per provider's offers"),
    ]
    assert lambda_rows == [("lambda-instance-types",)]


def test_the_fallback_loads_when_its_primary_fails_and_each_retires_the_other(tmp_path):
    broken = tmp_path / "capture"
    shutil.copytree(FIXTURES, broken)
    (broken / "lambda" / "lambda-instance-types" / "instance-types.json").write_text('{"error": "maintenance"}')
    rehash(broken)
    con = db.connect(tmp_path / "gpucat.duckdb")
    try:
        failed = refresh(con, LAMBDA, replay=broken)
        assert [failed["lambda-instance-types"][0], failed["lambda-page"][0]] == ["failed", "ok"]
        page_rows = current_sources(con, "lambda")
        assert list(page_rows) == ["lambda-page"]
        # The API comes back: its load retires the page's offers, and the page is not fetched.
        back = refresh(con, LAMBDA)
        assert [back["lambda-instance-types"][0], back["lambda-page"][0]] == ["ok", "skipped"]
        assert list(current_sources(con, "lambda")) == ["lambda-instance-types"]
        # The page's offers stay in history, closed, never with valid_to before valid_from.
        closed = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE valid_to < valid_from) FROM offer_versions WHERE source = 'lambda-page' AND valid_to IS NOT NULL"
        ).fetchone()
        assert closed == (page_rows["lambda-page"], 0)
        # Selected alone while the API's last run is ok, the page is skipped too.
        assert refresh(con, ["lambda-page"])["lambda-page"][0] == "skipped"
    finally:
        con.close()


def test_without_a_primary_run_the_fallback_loads(tmp_path):
    con = db.connect(tmp_path / "gpucat.duckdb")
    try:
        assert refresh(con, ["lambda-page"])["lambda-page"] == ("ok", None)
    finally:
        con.close()


@pytest.mark.parametrize("other_source", ["aws-spot", "aws-pricelist"])
def test_an_offer_key_another_source_of_the_provider_holds_is_rejected_not_doubled(tmp_path, other_source):
    first, second = ("aws-pricelist", "aws-spot") if other_source == "aws-spot" else ("aws-spot", "aws-pricelist")
    con = db.connect(tmp_path / "gpucat.duckdb")
    try:
        kept = offer(provider="aws", source=first, offer_id="p5.48xlarge/us-east-1/on_demand", price=98.32, usd_per_hour=98.32, usd_per_gpu_hour=12.29)
        taken = offer(provider="aws", source=second, offer_id="p5.48xlarge/us-east-1/on_demand", price=55.04, usd_per_hour=55.04, usd_per_gpu_hour=6.88)
        own = offer(provider="aws", source=second, offer_id="p5.48xlarge/us-west-2/spot", market="spot", price=40.0, usd_per_hour=40.0, usd_per_gpu_hour=5.0)
        load_source(con, RunRecord(run_id="r1", source=first, provider="aws", started_at=kept.scraped_at), [validate("offers", [kept])])
        run = RunRecord(run_id="r2", source=second, provider="aws", started_at=kept.scraped_at)
        load_source(con, run, [validate("offers", [taken, own])])
        rows = con.execute("SELECT source, offer_id, price FROM current_offers ORDER BY offer_id").fetchall()
    finally:
        con.close()
    assert rows == [(first, "p5.48xlarge/us-east-1/on_demand", 98.32), (second, "p5.48xlarge/us-west-2/spot", 40.0)]
    assert (run.rows_valid, [r.reasons for r in run.rejected]) == (
        1, [(f"key_held_by_other_source: {first} holds 'p5.48xlarge/us-east-1/on_demand'",)],
    )
