"""A refresh holds a source by the batch, not by the market (issue 26).

A source's parse streams into frames of `COLLECT_ROWS` records (`schemas.validate.collect`),
and DuckDB loads under `pipeline.LOAD_SETTINGS`. Neither may change what loads: these tests
compare a refresh collected a few rows at a time with one collected whole, and the frame's
streamed parse with its listed one. (`bench/refresh_floor.py --only market` measures the memory.)
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from gpucat import pipeline
from gpucat.schemas import validate as validate_module
from gpucat.scrapers import all_sources, get_source
from gpucat.scrapers.base import parse_pages, stream_pages
from gpucat.warehouse import db
from tests.conftest import FIXTURES, fixture_pages

SOURCES = ["vast-bundles", "runpod-graphql", "azure-retail", "gcp-terms", "ecb-rates"]


def _loaded(path: Path) -> tuple[list[tuple], list[tuple], list[tuple]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        offers = con.execute("SELECT * EXCLUDE (age_hours, is_stale) FROM current_offers ORDER BY ALL").fetchall()
        rejected = con.execute("SELECT source, table_name, reasons, row_json FROM rejected_rows ORDER BY ALL").fetchall()
        runs = con.execute("SELECT source, status, rows_fetched, rows_valid, rows_rejected, rows_skipped FROM scrape_runs ORDER BY ALL").fetchall()
        return offers, rejected, runs
    finally:
        con.close()


def test_a_refresh_collected_three_rows_at_a_time_and_loaded_in_bounded_memory_loads_what_a_whole_one_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    sources = [get_source(name) for name in SOURCES]
    whole = tmp_path / "whole.duckdb"
    pipeline.refresh_catalog(whole, sources, replay_dir=FIXTURES)
    monkeypatch.setattr(validate_module, "COLLECT_ROWS", 3)
    monkeypatch.setattr(pipeline, "BIG_BURST_ROWS", 1)  # and every burst loads under LOAD_SETTINGS
    chunked = tmp_path / "chunked.duckdb"
    runs = pipeline.refresh_catalog(chunked, sources, replay_dir=FIXTURES)
    assert {run.status for run in runs} == {"ok"}
    offers, rejected, counts = _loaded(chunked)
    assert len(offers) > 3 * 10 and rejected  # many chunks, and rows rejected while parsing
    assert (offers, rejected, counts) == _loaded(whole)


@pytest.mark.parametrize("name", sorted(all_sources()))
def test_the_streamed_parse_yields_what_the_listed_one_does(name: str):
    source = get_source(name)
    pages = fixture_pages(name)
    assert list(stream_pages(source, pages)) == parse_pages(source, pages)


def test_a_prepared_source_holds_frames_of_its_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(validate_module, "COLLECT_ROWS", 4)
    source = get_source("vast-bundles")
    outcome = pipeline.prepare_source(source, pipeline.FetchOptions(workdir=tmp_path, replay_dir=FIXTURES))
    assert isinstance(outcome, pipeline.Parsed) and isinstance(outcome.items, validate_module.Collected)
    heights = [f.height for f in outcome.items.frames["offers"]]
    assert max(heights) == 4 and len(heights) > 2


def test_the_load_settings_are_put_back_after_a_burst(tmp_path: Path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    db.migrate(con)
    con.execute("SET memory_limit = '2GiB'")  # a caller's own setting (DuckDB reports it to 0.1 GiB)
    before = con.execute("SELECT name, value FROM duckdb_settings() WHERE name IN ('threads', 'memory_limit') ORDER BY name").fetchall()
    seen = []
    with pipeline.load_memory(con):
        seen = con.execute("SELECT value FROM duckdb_settings() WHERE name = 'threads'").fetchall()
    assert seen == [("1",)]
    assert con.execute("SELECT name, value FROM duckdb_settings() WHERE name IN ('threads', 'memory_limit') ORDER BY name").fetchall() == before
    con.close()
