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
