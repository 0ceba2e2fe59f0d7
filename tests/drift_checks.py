"""The per-source drift checks, as functions over a source and the folders it lives in.

`tests/test_drift.py` runs them for every registered source; `tests/test_adding_a_source.py`
runs them on a throwaway source in a temporary directory to prove the three-file promise.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from gpucat import pipeline
from gpucat.schemas.errors import UserInputError
from gpucat.schemas.records import Offer
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers.base import Source
from gpucat.scrapers.capture import read_manifest


def replayed_pages(source: Source, fixtures: Path) -> list:
    work = Path(tempfile.mkdtemp(prefix="gpucat-drift-"))
    return pipeline.fetch_source(source, pipeline.FetchOptions(workdir=work, replay_dir=fixtures)).pages


def fixture_rates(fixtures: Path) -> dict:
    """The exchange rates a replay of `fixtures` loads first: what a refresh converts prices with."""
    from gpucat.scrapers import all_sources
    from gpucat.scrapers.normalize import rates_by_currency

    first = [s for s in all_sources().values() if s.loads_first and (fixtures / s.provider / s.name).is_dir()]
    return rates_by_currency(item for s in first for item in pipeline.parse_source(s, replayed_pages(s, fixtures)))


def source_problems(source: Source, fixtures: Path, tests: Path) -> list[str]:
    """Everything that has drifted for one source; empty when it is whole."""
    from fixtures.make_manifest import stale_manifests

    problems = []
    folder = fixtures / source.provider / source.name
    try:
        entries = read_manifest(folder) if folder.is_dir() else []
    except UserInputError as exc:
        return [f"{folder}/manifest.jsonl is incomplete (run uv run python fixtures/make_manifest.py): {exc}"]
    if not entries or not all(e.body.is_file() and e.body.parent == folder for e in entries):
        return [f"{folder} has no replayable fixtures (bodies + manifest.jsonl)"]
    if not (folder / "NOTES.md").is_file():
        problems.append(f"{folder} has no NOTES.md saying what its files mirror")
    if stale_manifests([source], fixtures):
        problems.append(f"{folder}/manifest.jsonl is stale: run uv run python fixtures/make_manifest.py")
    module = source.parse.__module__.rsplit(".", 1)[1]
    if not (tests / "scrapers" / f"test_{module}.py").is_file():
        problems.append(f"no parser test tests/scrapers/test_{module}.py")
    pages = replayed_pages(source, fixtures)
    items = pipeline.parse_source(source, pages, fixture_rates(fixtures))
    [batch] = pipeline.validate_sources([(source, items, len(pages))])
    if sum(b.frame.height for b in batch.batches) == 0:
        problems.append("its fixtures yield no valid row")
    # Parsers may reject rows for their own reasons; the schema must not have to.
    schema = [r.reasons for b in batch.batches for r in b.rejected if any(x.split(":")[0] in b.frame.columns or x.startswith("row:") for x in r.reasons)]
    if schema:
        problems.append(f"rows the schema rejects: {schema[:3]}")
    if "offers" in source.tables:
        if not source.gpu_targets:
            problems.append("declares no gpu_targets")
        unknown = source.gpu_targets - set(gpu_models())
        if unknown:
            problems.append(f"maps to GPUs missing from gpu_models: {sorted(unknown)}")
        undeclared = {i.gpu_model for i in items if isinstance(i, Offer)} - source.gpu_targets
        if undeclared:
            problems.append(f"fixtures produce gpu_models it does not declare in gpu_targets: {sorted(undeclared)}")
    return problems
