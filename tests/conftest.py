from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

# Prefect's ephemeral API for the flow tests: quiet, no analytics, room for a cold start.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(autouse=True)
def _no_user_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never depend on the developer's shell: no DB path, region or retry overrides, no keys."""
    for name in list(os.environ):
        if name.startswith("GPUCAT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name, raising=False)


def load_fixture_catalog(path: Path) -> Path:
    """The fixtures replayed into a DuckDB file through the pipeline steps (no Prefect: fast)."""
    import tempfile

    from gpucat import pipeline
    from scrapers import all_sources
    from warehouse import db

    con = db.connect(path)
    pipeline.load_reference(con)
    with tempfile.TemporaryDirectory() as work:
        options = pipeline.FetchOptions(workdir=Path(work), replay_dir=FIXTURES)
        for source in all_sources().values():
            pages = pipeline.fetch_source(source, options)
            batch = pipeline.validate_source(source, pipeline.parse_source(source, pages), len(pages))
            pipeline.load_batches(con, pipeline.new_run(source), batch)
    con.close()
    return path


@pytest.fixture(scope="session")
def catalog_db(tmp_path_factory) -> Path:
    """A read-only catalog for query tests; tests that write must copy it."""
    return load_fixture_catalog(tmp_path_factory.mktemp("catalog") / "gpucat.duckdb")
