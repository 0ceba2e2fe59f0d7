"""Fault injection over every registered source: a new source is covered without editing this file.

Each case refreshes the faulty source and one healthy neighbour in process (no Prefect), from a
copy of the fixture catalog, through the replay transport wrapped in a fault, with sleeps
recorded instead of slept. It asserts the faulty source's `scrape_runs` row, that the
neighbour loaded, and that the faulty source's last good rows are still current, unchanged.
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
from pathlib import Path

import pytest

from gpucat import pipeline
from gpucat.schemas.errors import SourceError
from gpucat.scrapers import all_sources, http
from gpucat.scrapers.capture import read_manifest
from gpucat.warehouse import db
from tests.conftest import FIXTURES
from tests.faults.faults import EVIL_HOST, FAULTS, OVERSIZED_LIMIT, Fault, FaultTransport, mutate

SOURCES = sorted(all_sources())
NEIGHBOURS = ("together", "crusoe")  # small, keyless: the healthy source loading beside the faulty one

# What a failing source's run says, by fault: the reason must be the fault, not a side effect.
FAILURE_WORDS = {
    "connect-timeout": "ConnectTimeout",
    "read-timeout": "ReadTimeout",
    "oversized-body": "limit",
    "redirect-to-another-host": f"undeclared host '{EVIL_HOST}'",
}

# Sources whose parser reads none of the names the renamed-fields fault renames (JSON keys, CSV
# header cells, <th> labels, class names, XML attributes), so the fault changes nothing they read:
# they must load exactly as before. Every other source must fail on it.
READS_NO_RENAMED_NAME = {
    "modal": "reads the 'GPU Tasks' heading and each line's label and price text; no <th>, class or key",
}

CURRENT = """
SELECT content_hash FROM offer_versions WHERE source = $s AND valid_to IS NULL
UNION ALL SELECT content_hash FROM interruption_rate_versions WHERE source = $s AND valid_to IS NULL
UNION ALL SELECT content_hash FROM exchange_rate_versions WHERE source = $s AND valid_to IS NULL
ORDER BY 1
"""


def bodies(name: str) -> list[bytes]:
    source = all_sources()[name]
    return [entry.body.read_bytes() for entry in read_manifest(FIXTURES / source.provider / source.name)]


@pytest.fixture
def catalog(catalog_db: Path, tmp_path: Path) -> Path:
    """A writable copy of the session's fixture catalog (loaded once for the whole suite)."""
    copy = tmp_path / "catalog.duckdb"
    shutil.copyfile(catalog_db, copy)
    from gpucat.warehouse import db

    with db.connect(copy) as con:  # no conditional fetch: every fault must meet a full fetch
        con.execute("DELETE FROM source_validators")
    return copy


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
@pytest.mark.parametrize("name", SOURCES)
def test_fault(name: str, fault: Fault, catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not fault.applies(bodies(name)):
        pytest.skip(f"{fault.name}: nothing in {name}'s bodies to change")
    source = all_sources()[name]
    if fault.name == "oversized-body":
        source = dataclasses.replace(source, max_response_bytes=OVERSIZED_LIMIT)
    neighbour = all_sources()[next(n for n in NEIGHBOURS if n != name)]
    if source.fallback_for:
        # A fallback runs only when its primary failed: make that so, and give it last good rows of its own.
        (tmp_path / "clean").mkdir()
        with db.connect(catalog) as con:
            primary = all_sources()[source.fallback_for]
            pipeline.record_outcome(con, pipeline.Prepared(primary, pipeline.new_run(primary), pipeline.Failed.of(SourceError("primary down for this test"))))
            clean = pipeline.refresh_sources(con, [source], pipeline.FetchOptions(workdir=tmp_path / "clean", replay_dir=FIXTURES))
        assert [r.status for r in clean] == ["ok"], [r.error for r in clean]
    sleeps: list[float] = []
    monkeypatch.setattr(pipeline, "Fetcher", functools.partial(http.Fetcher, sleep=sleeps.append))
    monkeypatch.setattr(pipeline, "load_reference", lambda con, schedules=None, cache=None: {})  # the copied catalog has it
    monkeypatch.setattr(
        pipeline, "make_client",
        lambda s, transport: http.make_client(s, FaultTransport(transport, fault) if s.name == name else transport),
    )  # fmt: skip

    con = db.connect(catalog)
    try:
        before = con.execute(CURRENT, {"s": name}).fetchall()
        options = pipeline.FetchOptions(workdir=tmp_path, replay_dir=FIXTURES)
        runs = {run.source: run for run in pipeline.refresh_sources(con, [source, neighbour], options)}
        after = con.execute(CURRENT, {"s": name}).fetchall()
        stored = con.execute("SELECT status, error FROM scrape_runs WHERE run_id = $r", {"r": runs[name].run_id}).fetchone()
    finally:
        con.close()

    run = runs[name]
    assert stored == (run.status, run.error)
    assert runs[neighbour.name].status == "ok", runs[neighbour.name].error
    assert after == before, "the faulty source's last good rows must stay current, unchanged"
    if fault.tolerated or (fault.name == "renamed-fields" and name in READS_NO_RENAMED_NAME):
        assert run.status == "ok", run.error
    elif fault.name == "truncated-body" and run.status == "ok":
        # Cut past everything the parser reads (a real page excerpt ends unclosed too, so HTML
        # cannot tell): it loaded exactly the rows it had (asserted above), nothing lost.
        assert run.rows_valid > 0
    else:
        assert run.status in ("failed", "quarantined"), f"{fault.name} loaded as {run.status}"
        assert run.error and FAILURE_WORDS.get(fault.name, "") in run.error
    if fault.name == "429-retry-after":
        assert 7.0 in sleeps
    if fault.name in ("5xx-then-success", "429-retry-after"):
        assert sleeps, "a transient failure is retried after a backoff"


def test_the_renamed_fields_exceptions_name_sources_it_applies_to() -> None:
    for name in READS_NO_RENAMED_NAME:
        assert name in SOURCES and any(mutate(b, "rename") for b in bodies(name)), name
