"""Anomaly quarantine: each trigger with the issue's figures, single implausible rows, `accept`."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

import pytest
from typer.testing import CliRunner

from gpucat import pipeline
from gpucat.cli import app
from gpucat.schemas.errors import UserInputError
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import get_source
from gpucat.scrapers.capture import rehash
from gpucat.warehouse import db, load
from tests.conftest import FIXTURES
from tests.factories import SCRAPED, offer

LATER = SCRAPED + timedelta(hours=1)
runner = CliRunner()


@pytest.fixture
def con(tmp_path):
    connection = db.connect(tmp_path / "test.duckdb")
    pipeline.load_reference(connection)
    yield connection
    connection.close()


def card(i: int, model: str = "H100-SXM", usd: float = 2.99, region: str = "us-east-1", **changes) -> object:
    """A one-GPU offer at `usd` per hour: the issue's figures are per GPU-hour."""
    fields = {
        "offer_id": f"{model}-{i}/{region}", "instance_type": f"{model}-{i}", "region": region, "gpu_name": model, "gpu_model": model,
        "gpu_count": 1.0, "gpu_memory_gb": gpu_models()[model].memory_gb, "price": usd, "usd_per_hour": usd, "usd_per_gpu_hour": usd,
    }  # fmt: skip
    return offer(**{**fields, **changes})


def catalog(**changes) -> list:
    """12 offers of one source: 4 H100 at $2.99, 8 L40S at $0.91 (the fixtures' medians), two regions."""
    h100 = [card(i, **changes) for i in range(4)]
    l40s = [card(i, "L40S", 0.91, region="us-east-1" if i < 4 else "us-west-2", **changes) for i in range(8)]
    return h100 + l40s


def run_load(con, records, source="example-offers"):
    from gpucat.schemas.validate import validate
    from tests.factories import example_source

    run = pipeline.new_run(example_source(source))
    return pipeline.load_batches(con, run, pipeline.SourceBatch([validate("offers", records)], pages=1))


def current(con, model="H100-SXM"):
    return con.execute("SELECT offer_id, usd_per_gpu_hour, scraped_at FROM current_offers WHERE gpu_model = $m ORDER BY offer_id", {"m": model}).fetchall()


def h100_at(usd: float, n: int = 4) -> list:
    return [card(i, usd=usd, scraped_at=LATER) for i in range(n)]


def l40s_again() -> list:
    return catalog(scraped_at=LATER)[4:]


def quarantined(con):
    return con.execute("SELECT status, error LIKE 'quarantined: %' FROM scrape_runs ORDER BY finished_at DESC LIMIT 1").fetchone()


def test_every_h100_jumping_30x_is_quarantined_and_nothing_loads(con):
    """Issue 11: a 30x jump to $89.7 loaded as truth."""
    run_load(con, catalog())
    before = current(con)
    run = run_load(con, h100_at(89.7) + l40s_again())
    assert run.status == "quarantined"
    assert "median price of H100-SXM moved 30.0x (2.99 -> 89.7 USD/GPU-h)" in run.error
    assert current(con) == before
    assert con.execute("SELECT count(*) FROM quarantined_rows WHERE run_id = $r", {"r": run.run_id}).fetchone() == (12,)


def test_a_median_move_over_3x_within_the_plausible_band_is_quarantined(con):
    run_load(con, catalog())
    run = run_load(con, h100_at(2.99 * 3.5) + l40s_again())
    assert run.status == "quarantined"
    assert run.error == "quarantined: median price of H100-SXM moved 3.5x (2.99 -> 10.46 USD/GPU-h) against the last good run"


def test_a_move_under_3x_loads(con):
    run_load(con, catalog())
    run = run_load(con, h100_at(7.0) + l40s_again())
    assert run.status == "ok"
    assert [row[1] for row in current(con)] == [7.0] * 4


def test_a_single_implausible_row_is_rejected_and_its_offer_keeps_its_last_good_version(con):
    """Issue 11: $0.0001 per GPU-hour for an H100 loaded as truth and fit recommended it."""
    run_load(con, catalog())
    before = current(con)
    run = run_load(con, [card(0, usd=0.0001, scraped_at=LATER), *h100_at(2.99)[1:], *l40s_again()])
    assert (run.status, run.rows_valid, run.rows_rejected) == ("ok", 11, 1)
    assert [row[:2] for row in current(con)] == [row[:2] for row in before]
    reasons = con.execute("SELECT reasons FROM rejected_rows WHERE run_id = $r", {"r": run.run_id}).fetchone()[0]
    assert reasons == ["implausible_price: usd_per_gpu_hour 0.0001 outside the reference bounds [0.3, 55.1] of H100-SXM"]


@pytest.mark.parametrize(
    ("usd", "reason"),
    [
        (89.7, "implausible_price: usd_per_gpu_hour 89.7 outside the reference bounds [0.3, 55.1] of H100-SXM"),  # issue 11's 30x
        (44.85, "implausible_jump: usd_per_gpu_hour 2.99 -> 44.85 (15x) against its last good version"),
    ],
)
def test_a_single_big_jump_is_rejected_and_its_offer_keeps_its_last_good_version(con, usd, reason):
    """Issue 11: a 30x jump to $89.7 loaded as truth."""
    run_load(con, catalog())
    before = current(con)
    run = run_load(con, [card(0, usd=usd, scraped_at=LATER), *h100_at(2.99)[1:], *l40s_again()])
    assert (run.status, run.rows_valid, run.rows_rejected) == ("ok", 11, 1)
    assert [row[:2] for row in current(con)] == [row[:2] for row in before]
    reasons = con.execute("SELECT reasons FROM rejected_rows WHERE run_id = $r", {"r": run.run_id}).fetchone()[0]
    assert reasons == [reason]


def test_fit_never_recommends_the_implausible_offer(con, tmp_path):
    run_load(con, catalog())
    run_load(con, [card(0, usd=0.0001, scraped_at=LATER), *h100_at(2.99)[1:], *l40s_again()])
    con.close()
    result = runner.invoke(app, ["fit", "--model", "llama-3.1-8b", "--method", "qlora", "--json", "--db", str(tmp_path / "test.duckdb")])
    assert result.exit_code == 0, result.output
    prices = [row["usd_per_gpu_hour"] for row in json.loads(result.stdout)["offers"]]
    assert prices and min(prices) == 0.91


def test_a_whole_batch_under_the_floor_is_quarantined(con):
    """A unit error (cents, per month) moves every price: quarantine, not a row-by-row rejection."""
    run_load(con, catalog())
    run = run_load(con, h100_at(0.0001) + [card(i, "L40S", 0.0003, region="us-east-1" if i < 4 else "us-west-2", scraped_at=LATER) for i in range(8)])
    assert run.status == "quarantined"
    assert "12 of 12 offers have implausible prices" in run.error


def test_the_floor_comes_from_the_catalog_not_the_provider(con):
    """Another source's batch is judged against every source's offers of the model."""
    run_load(con, catalog())
    cheap = [card(9, usd=0.05, source="example-spot", offer_id="cheap/eu", region="eu")]
    fair = [card(i, usd=2.5, source="example-spot", offer_id=f"fair{i}/eu", region="eu") for i in range(10)]
    run = run_load(con, cheap + fair, source="example-spot")
    assert (run.status, run.rows_valid, run.rows_rejected) == ("ok", 10, 1)


def test_a_rejected_share_spike_is_quarantined(con):
    run_load(con, catalog())
    before = current(con)
    broken = [card(i, usd=-1.0, scraped_at=LATER, offer_id=f"new{i}") for i in range(13)]  # 13 of 25 rejected: 52%
    run = run_load(con, catalog(scraped_at=LATER) + broken)
    assert run.status == "quarantined"
    assert run.error == "quarantined: 13 of 25 rows rejected (52%), over the 50% limit"
    assert current(con) == before


def test_a_first_run_may_reject_up_to_three_quarters(con):
    run = run_load(con, catalog() + [card(i, usd=-1.0, offer_id=f"bad{i}") for i in range(30)])
    assert run.status == "ok"
    run = run_load(con, catalog() + [card(i, usd=-1.0, offer_id=f"bad{i}") for i in range(40)], source="example-two")
    assert run.status == "quarantined"


def test_a_region_losing_a_share_of_its_offers_is_quarantined(con):
    run_load(con, catalog())
    run = run_load(con, h100_at(2.99) + l40s_again()[:2] + l40s_again()[4:])  # us-east-1: 8 offers, 2 gone
    assert run.status == "quarantined"
    assert run.error == "quarantined: region us-east-1 lost 2 of its 8 offers against the last good run"


def test_one_offer_gone_is_news_not_a_cut_file(con):
    run_load(con, catalog())
    run = run_load(con, h100_at(2.99) + l40s_again()[:3] + l40s_again()[4:])
    assert run.status == "ok"


def test_an_aws_regional_csv_cut_at_a_line_boundary_is_quarantined(tmp_path):
    """Issue 11: us-east-1.csv cut at a line boundary loaded as ok with 31 of 40 rows, 9 offers closed."""
    replay = tmp_path / "capture"
    shutil.copytree(FIXTURES / "aws" / "aws-pricelist", replay / "aws" / "aws-pricelist")
    con = db.connect(tmp_path / "aws.duckdb")
    source = get_source("aws-pricelist")
    options = pipeline.FetchOptions(workdir=tmp_path, replay_dir=replay)
    assert [r.status for r in pipeline.refresh_sources(con, [source], options, prerequisites=False)] == ["ok"]
    before = con.execute("SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers ORDER BY offer_id").fetchall()
    assert len(before) == 40

    csv = replay / "aws" / "aws-pricelist" / "us-east-1.csv"
    lines = csv.read_bytes().splitlines(keepends=True)
    while True:  # drop whole lines from the end until the file holds 9 offers fewer
        lines.pop()
        csv.write_bytes(b"".join(lines))
        rehash(replay)
        parsed = [i for i in pipeline.parse_source(source, pipeline.fetch_source(source, options).pages) if getattr(i, "table", "") == "offers"]
        if len(parsed) <= 31:
            break
    assert len(parsed) == 31
    # The file changed behind an unchanged versioned URL; forget the version so it is read again.
    con.execute("DELETE FROM source_validators")
    (run,) = pipeline.refresh_sources(con, [source], options, prerequisites=False)
    assert run.status == "quarantined"
    assert "region us-east-1 lost 9 of its" in run.error
    assert con.execute("SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers ORDER BY offer_id").fetchall() == before
    con.close()


def test_accept_loads_a_quarantined_batch_once(con):
    run_load(con, catalog())
    held = run_load(con, h100_at(2.99 * 3.5) + l40s_again())
    accepted = load.accept_quarantined(con, held.run_id)
    assert accepted.status == "ok" and accepted.error == f"accepted quarantined run {held.run_id}"
    assert [row[1:] for row in current(con)] == [(10.465, LATER)] * 4
    assert con.execute("SELECT accepted_run_id FROM quarantines WHERE run_id = $r", {"r": held.run_id}).fetchone() == (accepted.run_id,)
    with pytest.raises(UserInputError, match="already accepted"):
        load.accept_quarantined(con, held.run_id)


def test_accept_keeps_the_rejected_rows_offers(con):
    run_load(con, catalog())
    broken = [card(i, usd=-1.0, scraped_at=LATER) for i in range(4)]  # every H100 rejected...
    held = run_load(con, broken + l40s_again() + [card(i, usd=-1.0, offer_id=f"x{i}") for i in range(6)])
    assert held.status == "quarantined"
    before = current(con)
    load.accept_quarantined(con, held.run_id)
    assert current(con) == before  # ...so accepting keeps their last good versions


def test_accept_refuses_unknown_and_superseded_runs(con):
    run_load(con, catalog())
    held = run_load(con, h100_at(2.99 * 3.5) + l40s_again())
    with pytest.raises(UserInputError, match="no quarantined run 'nope'"):
        load.accept_quarantined(con, "nope")
    run_load(con, catalog(scraped_at=LATER + timedelta(hours=1)))
    with pytest.raises(UserInputError, match="loaded a good run since"):
        load.accept_quarantined(con, held.run_id)


def test_status_and_accept_commands(con, tmp_path):
    run_load(con, catalog())
    held = run_load(con, h100_at(2.99 * 3.5) + l40s_again())
    con.close()
    path = str(tmp_path / "test.duckdb")
    out = runner.invoke(app, ["status", "--json", "--db", path])
    assert out.exit_code == 0, out.output
    (row,) = [r for r in json.loads(out.stdout) if r["source"] == "example-offers"]
    assert (row["status"], row["quarantined_runs"]) == ("quarantined", [held.run_id])
    table = runner.invoke(app, ["status", "--db", path])
    assert f"gpucat accept {held.run_id}" in table.stdout
    out = runner.invoke(app, ["accept", held.run_id, "--db", path])
    assert out.exit_code == 0, out.output
    assert f"loaded quarantined run {held.run_id} of example-offers as run" in out.stdout
    again = runner.invoke(app, ["accept", held.run_id, "--db", path])
    assert again.exit_code == 2 and again.output.startswith("error: quarantined run")
    out = runner.invoke(app, ["status", "--json", "--db", path])
    (row,) = [r for r in json.loads(out.stdout) if r["source"] == "example-offers"]
    assert (row["status"], row["quarantined_runs"]) == ("ok", [])


def test_help_names_accept():
    assert "accept" in runner.invoke(app, ["--help"]).stdout


def test_a_refresh_names_its_quarantined_sources():
    summary = [{"source": "a", "status": "ok"}, {"source": "b", "status": "quarantined"}]
    assert pipeline.refresh_outcome(summary) == (True, "2 sources refreshed; quarantined (see gpucat status): b")
