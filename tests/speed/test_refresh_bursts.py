"""A refresh opens the warehouse a few times, not a few times per source (issue 12).

Sources fetch and parse with the file closed; whatever is ready is validated in one pandera
pass per table and loaded in one opening, each source in its own transaction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpucat import pipeline
from gpucat.schemas.errors import FetchError
from gpucat.scrapers import all_sources
from gpucat.warehouse import db
from tests.conftest import FIXTURES
from tests.factories import example_source, offer


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The read_only flag of every `db.connect`, in order."""
    seen: list[bool] = []
    real = db.connect

    def counting(*args, **kwargs):
        seen.append(kwargs.get("read_only", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(db, "connect", counting)
    return seen


def test_a_whole_refresh_opens_the_file_once_per_burst_of_ready_sources(tmp_path: Path, opens: list[bool], monkeypatch: pytest.MonkeyPatch):
    bursts: list[int] = []
    real = pipeline.load_prepared

    def counting(writer, ready, fallbacks=(), **kwargs):
        bursts.append(len(ready) + len(fallbacks))
        return real(writer, ready, fallbacks, **kwargs)

    monkeypatch.setattr(pipeline, "load_prepared", counting)
    sources = list(all_sources().values())
    runs = pipeline.refresh_catalog(tmp_path / "w.duckdb", sources, replay_dir=FIXTURES)
    fallbacks = {s.name for s in sources if s.fallback_for}  # skipped while their primary loads
    assert {run.status for run in runs if run.source not in fallbacks} <= {"ok", "unchanged"}
    assert {run.status for run in runs if run.source in fallbacks} == {"skipped"}
    assert [run.source for run in runs] == [s.name for phase in pipeline.phases(sources) for s in phase]
    # one opening up front (reference data, fetch tokens, rates), then one per burst and no other:
    # the fallbacks skipped while their primaries load are recorded in their primaries' burst
    assert opens == [False] * (1 + len(bursts))
    assert sum(bursts) == len(sources)
    assert len(bursts) < len(sources) / 2, bursts  # replayed sources are ready together


def test_one_burst_loads_each_source_in_its_own_run(tmp_path: Path, opens: list[bool]):
    """A rejection of the joint validation lands on its own source's run; a failed fetch fails only its source."""
    a, b, c = example_source("example-a"), example_source("example-b"), example_source("example-c")
    ready = [
        pipeline.Prepared(a, pipeline.new_run(a), pipeline.Parsed([offer(source="example-a", offer_id=f"a{i}") for i in range(3)], pages=1)),
        pipeline.Prepared(b, pipeline.new_run(b), pipeline.Parsed(pages=1, items=[
            offer(source="example-b", offer_id="b1"), offer(source="example-b", offer_id="b2", usd_per_gpu_hour=-1.0)])),  # fmt: skip
        pipeline.Prepared(c, pipeline.new_run(c), pipeline.Failed.of(FetchError("example-c: connection refused"))),
    ]
    runs, _ = pipeline.load_prepared(db.writer(tmp_path / "w.duckdb"), ready)
    assert opens == [False]
    assert [(r.source, r.status, r.rows_valid, r.rows_rejected, r.error) for r in runs] == [
        ("example-a", "ok", 3, 0, None),
        ("example-b", "ok", 1, 1, None),
        ("example-c", "failed", 0, 0, "FetchError: example-c: connection refused"),
    ]
    with db.connect(tmp_path / "w.duckdb", read_only=True) as con:
        rejected = con.execute("SELECT source, run_id, row_json FROM rejected_rows").fetchall()
        stored = con.execute("SELECT source, status, rows_valid, rows_rejected FROM scrape_runs ORDER BY source").fetchall()
        current = con.execute("SELECT source, offer_id FROM current_offers ORDER BY offer_id").fetchall()
    assert [(s, r, json.loads(row)["offer_id"]) for s, r, row in rejected] == [("example-b", runs[1].run_id, "b2")]
    assert stored == [("example-a", "ok", 3, 0), ("example-b", "ok", 1, 1), ("example-c", "failed", 0, 0)]
    assert current == [("example-a", "a0"), ("example-a", "a1"), ("example-a", "a2"), ("example-b", "b1")]


def test_a_validation_that_breaks_outright_fails_only_its_own_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Not a data problem (a bug, an engine error) in the joint pass: each source meets it alone."""
    import gpucat.schemas.validate as validate_module

    real = validate_module._failures

    def failures(contract, frame):
        if "broken" in frame["offer_id"].to_list():
            raise RuntimeError("engine trouble")
        return real(contract, frame)

    monkeypatch.setattr(validate_module, "_failures", failures)
    a, b = example_source("example-a"), example_source("example-b")
    ready = [
        pipeline.Prepared(a, pipeline.new_run(a), pipeline.Parsed([offer(source="example-a", offer_id="a1")], pages=1)),
        pipeline.Prepared(b, pipeline.new_run(b), pipeline.Parsed([offer(source="example-b", offer_id="broken")], pages=1)),
    ]
    runs, _ = pipeline.load_prepared(db.writer(tmp_path / "w.duckdb"), ready)
    assert [(r.source, r.status, r.error) for r in runs] == [("example-a", "ok", None), ("example-b", "failed", "RuntimeError: engine trouble")]


def test_a_burst_that_cannot_open_the_file_says_why_on_every_run(tmp_path: Path):
    from tests.warehouse.test_locks import hold

    path = tmp_path / "w.duckdb"
    db.connect(path).close()
    a, c = example_source("example-a"), example_source("example-c")
    ready = [
        pipeline.Prepared(a, pipeline.new_run(a), pipeline.Parsed([offer(source="example-a", offer_id="a1")], pages=1)),
        pipeline.Prepared(c, pipeline.new_run(c), pipeline.Failed.of(FetchError("example-c: connection refused"))),
    ]
    reader = hold(path, "read", 3)
    try:
        runs, _ = pipeline.load_prepared(db.writer(path, wait_s=0.3), ready)
    finally:
        reader.wait(timeout=30)
    busy = f"{path} is busy: other processes are reading or writing it; gave up after 0.3 s, try again"
    assert [(r.source, r.status, r.error) for r in runs] == [
        ("example-a", "failed", f"DatabaseBusy: {busy}; not recorded: {busy}"),
        ("example-c", "failed", f"FetchError: example-c: connection refused; not recorded: {busy}"),
    ]


def _counting_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many sources each pass over a burst's writes held: one pass when the burst commits once."""
    passes: list[int] = []
    real = pipeline._write_each

    def counting(con, ready, *args):
        passes.append(len(ready))
        return real(con, ready, *args)

    monkeypatch.setattr(pipeline, "_write_each", counting)
    return passes


def test_a_clean_burst_writes_its_sources_in_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    passes = _counting_writes(monkeypatch)
    a, b = example_source("example-a"), example_source("example-b")
    ready = [pipeline.Prepared(s, pipeline.new_run(s), pipeline.Parsed([offer(source=s.name, offer_id=f"{s.name}-{i}") for i in range(3)], pages=1))
             for s in (a, b)]  # fmt: skip
    runs, _ = pipeline.load_prepared(db.writer(tmp_path / "w.duckdb"), ready)
    assert [(r.source, r.status, r.rows_valid) for r in runs] == [("example-a", "ok", 3), ("example-b", "ok", 3)]
    assert passes == [2]
    with db.connect(tmp_path / "w.duckdb", read_only=True) as con:
        assert con.execute("SELECT source, count(*) FROM current_offers GROUP BY source ORDER BY source").fetchall() == [("example-a", 3), ("example-b", 3)]


def test_a_source_refused_mid_merge_fails_alone_and_leaves_its_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Its transaction had begun (the batch staged, its plan made) when the merge refused the batch:
    the burst is rolled back and written again source by source, so the others still load."""
    from datetime import UTC, datetime

    from gpucat.schemas.validate import Validated, validate

    path = tmp_path / "w.duckdb"
    a, b, c = example_source("example-a"), example_source("example-b"), example_source("example-c")
    with db.connect(path) as con:  # b's current offers were seen in 2099: a batch of today would end them before they began
        early = validate("offers", [offer(source="example-b", offer_id=f"b{i}") for i in range(3)]).frame
        pipeline.load_batches(con, pipeline.new_run(b), pipeline.SourceBatch([Validated("offers", early.with_columns(scraped_at=datetime(2099, 1, 1, tzinfo=UTC)), [])], 1))
        held = con.execute("SELECT * FROM offer_versions ORDER BY offer_id").fetchall()
    passes = _counting_writes(monkeypatch)
    ready = [
        pipeline.Prepared(a, pipeline.new_run(a), pipeline.Parsed([offer(source="example-a", offer_id=f"a{i}") for i in range(3)], pages=1)),
        pipeline.Prepared(b, pipeline.new_run(b), pipeline.Parsed([offer(source="example-b", offer_id=f"b{i}", price=56.0, usd_per_hour=56.0, usd_per_gpu_hour=7.0) for i in range(3)], pages=1)),
        pipeline.Prepared(c, pipeline.new_run(c), pipeline.Parsed([offer(source="example-c", offer_id=f"c{i}") for i in range(2)], pages=1)),
    ]
    runs, _ = pipeline.load_prepared(db.writer(path), ready)
    assert [(r.source, r.status, len(r.rejected)) for r in runs] == [("example-a", "ok", 0), ("example-b", "failed", 0), ("example-c", "ok", 0)]
    assert "would end 3 offers versions before they began" in (runs[1].error or "")
    assert passes == [3, 3]  # joined, then source by source
    with db.connect(path, read_only=True) as con:
        assert con.execute("SELECT * FROM offer_versions WHERE source = 'example-b' ORDER BY offer_id").fetchall() == held
        assert con.execute("SELECT source, count(*) FROM current_offers GROUP BY source ORDER BY source").fetchall() == [
            ("example-a", 3), ("example-b", 3), ("example-c", 2)]  # fmt: skip
        assert con.execute("SELECT source, status FROM scrape_runs WHERE run_id IN (SELECT unnest($ids)) ORDER BY source", {"ids": [r.run_id for r in runs]}).fetchall() == [
            ("example-a", "ok"), ("example-b", "failed"), ("example-c", "ok")]  # fmt: skip
