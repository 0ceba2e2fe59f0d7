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


@pytest.fixture(scope="session")
def _user_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("user-dirs")


@pytest.fixture(autouse=True)
def _no_user_env(monkeypatch: pytest.MonkeyPatch, _user_dirs: Path) -> None:
    """Tests never depend on the developer's shell: no DB path, region or retry overrides, no keys;
    and they never write into the real user data directory (the default database's folder), nor
    read a model config cached there: both point into the session's temp folder."""
    for name in list(os.environ):
        if name.startswith("GPUCAT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(_user_dirs / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(_user_dirs / "cache"))  # a refresh keeps validated reference data there
    monkeypatch.setenv("LOCALAPPDATA", str(_user_dirs / "data"))


def load_fixture_catalog(path: Path, replay_dir: Path = FIXTURES) -> Path:
    """The fixtures replayed into a DuckDB file through the pipeline steps (no Prefect: fast)."""
    import tempfile

    from gpucat import pipeline
    from gpucat.scrapers import all_sources
    from gpucat.warehouse import db

    con = db.connect(path)
    with tempfile.TemporaryDirectory() as work:
        options = pipeline.FetchOptions(workdir=Path(work), replay_dir=replay_dir)
        runs = pipeline.refresh_sources(con, list(all_sources().values()), options)
    # The bundled captures are weeks old: query tests read them as current (freshness has its own tests).
    con.execute("UPDATE source_schedules SET stale_after_hours = 1e9")
    con.close()
    # A fallback is skipped while its primary loads (one truth per provider): that is no failure.
    failed = [f"{r.source}: {r.error}" for r in runs if r.status != "ok" and not (r.status == "skipped" and (r.error or "").startswith("fallback of "))]
    assert not failed, failed
    return path


def fixture_pages(source_name: str, replay_dir: Path = FIXTURES) -> list:
    """The pages a replayed fetch of one source yields (its fetch walk over the fixtures)."""
    import tempfile

    from gpucat import pipeline
    from gpucat.scrapers import get_source

    work = Path(tempfile.mkdtemp(prefix="gpucat-pages-"))
    return pipeline.fetch_source(get_source(source_name), pipeline.FetchOptions(workdir=work, replay_dir=replay_dir)).pages


def fixture_files(source_name: str) -> list[Path]:
    """The fixture bodies the source's fetch walk yields as pages, in order (what `gpucat parse` takes)."""
    from gpucat.schemas.redact import match_url
    from gpucat.scrapers import get_source
    from gpucat.scrapers.capture import read_manifest

    source = get_source(source_name)
    entries = {match_url(e.url): e.body for e in read_manifest(FIXTURES / source.provider / source.name)}
    return [entries[match_url(page.url)] for page in fixture_pages(source_name)]


@pytest.fixture(scope="session")
def catalog_db(tmp_path_factory) -> Path:
    """A read-only catalog for query tests; tests that write must copy it."""
    return load_fixture_catalog(tmp_path_factory.mktemp("catalog") / "gpucat.duckdb")
