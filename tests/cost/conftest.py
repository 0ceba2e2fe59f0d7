"""A replayed catalog with provider terms for the cost tests.

Until the terms tables are loaded by their own sources, the tests create them (when missing)
with the columns the cost model reads, and fill them with figures from
shared/reference/providers.md: AWS bills per second with a 60 s minimum, gp3 EBS at
$0.08/GB-month survives a stop, 100 GB/month of free egress then $0.09/GB up to 10 TB (then
$0.085, $0.07, $0.05); RunPod bills per minute, a volume disk ($0.20/GB-month while stopped)
or network volume ($0.07/GB-month) survives a stop, egress is free. Azure gets billing and
egress terms but no storage term, the "provider with no terms" case.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

TERMS_DDL = """
CREATE TABLE IF NOT EXISTS providers (provider VARCHAR PRIMARY KEY, billing_increment_s DOUBLE, min_charge_s DOUBLE,
                                      spot_notice_s DOUBLE);
CREATE TABLE IF NOT EXISTS storage_terms (provider VARCHAR, kind VARCHAR, usd_per_gb_month DOUBLE,
                                          persists_on_stop BOOLEAN, billed_while_stopped BOOLEAN);
CREATE TABLE IF NOT EXISTS egress_terms (provider VARCHAR, from_gb DOUBLE, to_gb DOUBLE, usd_per_gb DOUBLE,
                                         free_allowance_gb_month DOUBLE);
"""

PROVIDERS = [("aws", 1, 60, 120), ("azure", 1, 0, 30), ("runpod", 60, 60, None)]
STORAGE = [
    ("aws", "ebs-gp3", 0.08, True, True),
    ("runpod", "container-disk", 0.10, False, False),
    ("runpod", "volume-disk", 0.20, True, True),
    ("runpod", "network-volume", 0.07, True, True),
]
EGRESS = [
    ("aws", 0, 10240, 0.09, 100), ("aws", 10240, 51200, 0.085, 100), ("aws", 51200, 153600, 0.07, 100),
    ("aws", 153600, None, 0.05, 100), ("azure", 0, None, 0.087, 100), ("runpod", 0, None, 0.0, 0),
]  # fmt: skip


def add_terms(path: Path, *, providers=PROVIDERS, storage=STORAGE, egress=EGRESS) -> Path:
    con = duckdb.connect(str(path))
    for statement in TERMS_DDL.split(";"):
        if statement.strip():
            con.execute(statement)
    for table in ("providers", "storage_terms", "egress_terms"):
        con.execute(f"DELETE FROM {table}")
    con.executemany("INSERT INTO providers VALUES (?, ?, ?, ?)", providers)
    con.executemany("INSERT INTO storage_terms VALUES (?, ?, ?, ?, ?)", storage)
    con.executemany("INSERT INTO egress_terms VALUES (?, ?, ?, ?, ?)", egress)
    con.close()
    return path


@pytest.fixture(scope="session")
def terms_catalog(catalog_db, tmp_path_factory) -> Path:
    """The replayed catalog plus provider terms (read-only use: copy it to write)."""
    path = tmp_path_factory.mktemp("cost") / "gpucat.duckdb"
    shutil.copy(catalog_db, path)
    return add_terms(path)


@pytest.fixture
def cost_db(terms_catalog, tmp_path) -> Path:
    """A private copy that `gpucat cost` may write its answer into."""
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(terms_catalog, path)
    return path
