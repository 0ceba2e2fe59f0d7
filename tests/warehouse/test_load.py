"""Versioned loads: idempotent, history on change only, batch checks, atomic per source."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpucat import pipeline
from gpucat.schemas.errors import BatchRejected
from gpucat.schemas.validate import validate
from gpucat.warehouse import db, load
from tests.factories import SCRAPED, example_source, offer, offers


@pytest.fixture
def con(tmp_path):
    connection = db.connect(tmp_path / "test.duckdb")
    pipeline.load_reference(connection)
    yield connection
    connection.close()


def run_load(con, records, source="example-offers"):
    run = pipeline.new_run(example_source(source))
    batch = pipeline.SourceBatch([validate("offers", records)], pages=1)
    return pipeline.load_batches(con, run, batch)


def current(con):
    return con.execute("SELECT offer_id, usd_per_hour, scraped_at FROM current_offers ORDER BY offer_id").fetchall()


def versions(con):
    return con.execute("SELECT offer_id, usd_per_hour, valid_from, valid_to FROM offer_versions ORDER BY offer_id, valid_from").fetchall()


def test_same_batch_twice_changes_nothing(con):
    run_load(con, offers(3))
    before = (current(con), versions(con))
    run_load(con, offers(3))
    assert (current(con), versions(con)) == before
    assert con.execute("SELECT count(*) FROM scrape_runs WHERE status = 'ok'").fetchone() == (2,)


def test_price_change_closes_the_old_version_and_opens_a_new_one(con):
    later = SCRAPED + timedelta(hours=1)
    run_load(con, [offer()])
    run_load(con, [offer(price=50.0, usd_per_hour=50.0, usd_per_gpu_hour=6.25, scraped_at=later)])
    assert versions(con) == [
        ("gpu8.48xlarge/us-east-1/on_demand", 55.04, SCRAPED, later),
        ("gpu8.48xlarge/us-east-1/on_demand", 50.0, later, None),
    ]
    assert current(con) == [("gpu8.48xlarge/us-east-1/on_demand", 50.0, later)]


def test_unchanged_offer_only_moves_its_scrape_time(con):
    later = SCRAPED + timedelta(hours=1)
    run_load(con, [offer()])
    run_load(con, [offer(scraped_at=later)])
    assert versions(con) == [("gpu8.48xlarge/us-east-1/on_demand", 55.04, SCRAPED, None)]
    assert current(con) == [("gpu8.48xlarge/us-east-1/on_demand", 55.04, later)]


def availability(con):
    return con.execute(
        "SELECT offer_id, availability, valid_from, valid_to, content_hash LIKE 'delisted:%' FROM offer_versions "
        "WHERE offer_id = 'type3/us-east-1/on_demand' ORDER BY valid_from"
    ).fetchall()


def test_offer_gone_from_the_source_stays_in_history_as_unavailable(con):
    later, latest = SCRAPED + timedelta(hours=1), SCRAPED + timedelta(hours=2)
    run_load(con, offers(4))
    run_load(con, offers(3, scraped_at=later))
    gone = "type3/us-east-1/on_demand"
    assert availability(con) == [(gone, "unknown", SCRAPED, later, False), (gone, "unavailable", later, None, True)]
    # Still current, now unavailable, and last seen when it was last listed (so it ages and goes stale).
    assert con.execute("SELECT availability, available_count, scraped_at FROM current_offers WHERE offer_id = $id", {"id": gone}).fetchall() == [
        ("unavailable", None, SCRAPED)
    ]
    versions_before = versions(con)
    run_load(con, offers(3, scraped_at=latest))  # still gone: nothing new
    assert versions(con) == versions_before
    run_load(con, offers(4, scraped_at=latest))  # listed again: a new available version
    assert [row[1:4] for row in availability(con)] == [("unknown", SCRAPED, later), ("unavailable", later, latest), ("unknown", latest, None)]


def test_other_sources_rows_are_untouched(con):
    run_load(con, offers(2))
    spot = [offer(offer_id="gpu8.48xlarge/us-east-1/spot", market="spot", source="example-spot")]
    run_load(con, spot, source="example-spot")
    assert len(current(con)) == 3


@pytest.mark.parametrize(
    ("second", "message"),
    [(0, "no valid rows"), (4, "under 50% of the last good run's 10")],
    ids=["zero-rows", "collapse"],
)
def test_batch_checks_fail_the_source_and_keep_its_data(con, second, message):
    run_load(con, offers(10))
    before = versions(con)
    with pytest.raises(BatchRejected, match=message):
        run_load(con, offers(second))
    assert versions(con) == before


def test_failed_load_rolls_back_everything(con, monkeypatch):
    run_load(con, offers(2))
    before = (versions(con), con.execute("SELECT count(*) FROM scrape_runs").fetchone())

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(load, "_record", explode)  # after the merge, inside the transaction
    with pytest.raises(RuntimeError):
        run_load(con, offers(2, usd_per_hour=1.0, price=1.0, usd_per_gpu_hour=0.125))
    assert (versions(con), con.execute("SELECT count(*) FROM scrape_runs").fetchone()) == before


def test_rejected_rows_are_recorded_with_reasons(con):
    run = run_load(con, offers(2) + [offer(offer_id="bad", price=-1.0)])
    rows = con.execute("SELECT run_id, source, table_name, reasons, row_json->>'offer_id' FROM rejected_rows").fetchall()
    assert rows == [(run.run_id, "example-offers", "offers", ["price: greater_than(0)"], "bad")]
    assert con.execute("SELECT rows_fetched, rows_valid, rows_rejected FROM scrape_runs").fetchone() == (3, 2, 1)


def test_a_rejected_row_keeps_its_offers_last_good_version(con):
    """Issue 11: one bad value turned 4 H100 rows into 0; they keep their last good version."""
    later = SCRAPED + timedelta(hours=1)
    h100 = offers(4)
    others = [offer(offer_id=f"l4-{i}/us-east-1/on_demand", instance_type=f"l4-{i}", gpu_model="L4", gpu_name="L4", gpu_count=1.0,
                    gpu_memory_gb=24.0, price=0.8, usd_per_hour=0.8, usd_per_gpu_hour=0.8) for i in range(8)]
    run_load(con, h100 + others)
    before = con.execute("SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers WHERE gpu_model = 'H100-SXM' ORDER BY offer_id").fetchall()
    bad_h100 = offers(4, price=-55.04, scraped_at=later)  # one bad value, repeated in every H100 row
    run = run_load(con, bad_h100 + [offer(**{**o.as_row(), "scraped_at": later}) for o in others])
    assert (run.status, run.rows_valid, run.rows_rejected) == ("ok", 8, 4)
    assert con.execute("SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers WHERE gpu_model = 'H100-SXM' ORDER BY offer_id").fetchall() == before
    assert con.execute("SELECT count(*) FROM current_offers").fetchone() == (12,)


def test_a_rejected_row_with_a_valid_twin_does_not_keep_a_stale_version(con):
    """A key listed twice with the same content: the copy is rejected, the offer moves on."""
    later = SCRAPED + timedelta(hours=1)
    run_load(con, offers(2))
    new = offer(offer_id="type0/us-east-1/on_demand", instance_type="type0", price=50.0, usd_per_hour=50.0, usd_per_gpu_hour=6.25, scraped_at=later)
    run = run_load(con, [new, new])
    assert (run.status, run.rows_valid, run.rows_rejected) == ("ok", 1, 1)
    assert current(con)[0] == ("type0/us-east-1/on_demand", 50.0, later)  # type1, unlisted, is kept as delisted


def _load_two(path, burst: bool, monkeypatch):
    """`example-offers` loaded alone, then a second load of it (one price changed, one offer
    gone) and a first load of `other-offers`: in one burst (pipeline.load_prepared), or each
    source by itself without one."""
    held = {}
    holds = load.Burst.holds

    def spy(self, what, source):
        held[what, source] = holds(self, what, source)
        return held[what, source]

    monkeypatch.setattr(load.Burst, "holds", spy)
    con = db.connect(path)
    pipeline.load_reference(con)
    later = SCRAPED + timedelta(hours=1)
    run_load(con, offers(3))
    changed = offer(offer_id="type0/us-east-1/on_demand", instance_type="type0", price=50.0, usd_per_hour=50.0, usd_per_gpu_hour=6.25, scraped_at=later)
    loads = {
        "example-offers": [changed, *offers(2, scraped_at=later)[1:]],
        "other-offers": [offer(offer_id=f"other{i}/us-east-1/on_demand", instance_type=f"other{i}", source="other-offers", scraped_at=later) for i in range(2)],
    }
    if burst:
        ready = [pipeline.Prepared(example_source(name), pipeline.new_run(example_source(name)), pipeline.Parsed(records, 1)) for name, records in loads.items()]
        pipeline.load_prepared(db.ConnectionWriter(con), ready)
    else:
        for name, records in loads.items():
            run_load(con, records, source=name)
    rows = {
        table: sorted(map(repr, con.execute(f"SELECT * EXCLUDE ({exclude}) FROM {table}").fetchall()))
        for table, exclude in (
            ("offer_versions", "first_run_id, last_run_id"),
            ("scrape_runs", "run_id, started_at, finished_at"),
            ("source_gpu_medians", "as_of"),
        )
    }
    con.close()
    return rows, held


def test_a_burst_loads_a_source_new_to_a_table_as_its_own_merge_would(tmp_path, monkeypatch):
    """A burst knows which of its sources hold no current versions (load.Burst.holds) and inserts
    their rows without a merge plan: the versions, runs and medians are those of the plain merge."""
    one_by_one, _ = _load_two(tmp_path / "alone.duckdb", False, monkeypatch)
    together, held = _load_two(tmp_path / "burst.duckdb", True, monkeypatch)
    assert held == {
        ("offer_versions", "example-offers"): True, ("source_gpu_medians", "example-offers"): True,
        ("offer_versions", "other-offers"): False, ("source_gpu_medians", "other-offers"): False,
    }
    assert together == one_by_one
    assert len(together["offer_versions"]) == 3 + 1 + 1 + 2  # 3 first; the changed price's new version; the gone offer delisted; 2 new
