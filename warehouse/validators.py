"""Conditional fetch in the warehouse: validators per source, and the record of an unchanged run.

Validators are written only after a source's load succeeded (status `ok`), so they always vouch
for data that is loaded; a failed or quarantined run leaves the previous ones in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import duckdb
import polars as pl

from gpucat.scrapers.conditional import Validators
from gpucat.warehouse.db import query_sql, staged, transaction
from gpucat.warehouse.load import VERSIONS_TABLE, RunRecord, record_run


def load_all(con: duckdb.DuckDBPyConnection) -> dict[str, Validators]:
    """Source -> its validators, for every source that has some (one query for a whole refresh)."""
    return {row[0]: Validators(*row[1:]) for row in con.execute(query_sql("all_source_validators")).fetchall()}


def save_all(con: duckdb.DuckDBPyConnection, seen: Sequence[tuple[str, Validators, str]]) -> None:
    """Store (source, validators, run_id) of successful loads, in one transaction (one commit)."""
    if not seen:
        return
    rows = [_params(source, v, run_id) for source, v, run_id in seen]
    # One statement over a frame: DuckDB's executemany runs (and plans) one INSERT per row.
    frame = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    with transaction(con), staged(con, "validators_frame", frame):
        con.execute(query_sql("save_source_validators"))


_SCHEMA = {
    "source": pl.String, "method": pl.String, "url": pl.String, "request_body_sha256": pl.String, "etag": pl.String,
    "last_modified": pl.String, "version": pl.String, "requests": pl.Int64, "code_version": pl.String, "run_id": pl.String,
}  # fmt: skip


def _params(source: str, validators: Validators, run_id: str) -> dict[str, object]:
    return {
        "source": source,
        "method": validators.method,
        "url": validators.url,
        "request_body_sha256": validators.request_body_sha256,
        "etag": validators.etag,
        "last_modified": validators.last_modified,
        "version": validators.version,
        "requests": validators.requests,
        "code_version": validators.code_version,
        "run_id": run_id,
    }


def record_unchanged(con: duckdb.DuckDBPyConnection, run: RunRecord, tables: Sequence[str], checked_at: datetime) -> None:
    """An `unchanged` run: the source's current rows count as seen at `checked_at`, atomically with the record."""
    with transaction(con):
        for table in tables:
            versions = VERSIONS_TABLE.get(table)
            if versions is not None:
                con.execute(
                    query_sql("touch_current_versions").format(versions=versions),
                    {"source": run.source, "run_id": run.run_id, "checked_at": checked_at},
                )
        record_run(con, run, status="unchanged")
