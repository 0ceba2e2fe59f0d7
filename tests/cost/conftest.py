"""A replayed catalog for the cost tests: fixture offers plus the provider terms refresh loads
(schemas/reference/terms/*.csv)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def cost_db(catalog_db, tmp_path) -> Path:
    """A private copy that `gpucat cost` may write its answer into."""
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(catalog_db, path)
    return path
