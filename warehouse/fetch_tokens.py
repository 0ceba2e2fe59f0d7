"""Conditional fetch in the warehouse: each source's fetch tokens (ETag, Last-Modified, the
provider's version), and the record of an unchanged run. They live in table `source_validators`.

Tokens are written only after a source's load succeeded (status `ok`), so they always vouch
for data that is loaded; a failed or quarantined run leaves the previous ones in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import duckdb
import polars as pl

from gpucat.scrapers.conditional import FetchTokens
from gpucat.warehouse.db import query_sql, staged, transaction
from gpucat.warehouse.load import VERSIONS_TABLE, RunRecord, record_run


def load_all(con: duckdb.DuckDBPyConnection) -> dict[str, FetchTokens]:
    """Source -> its fetch tokens, for every source that has some (one query for a whole refresh)."""
    return {row[0]: FetchTokens(*row[1:]) for row in con.execute(query_sql("all_fetch_tokens")).fetchall()}


def save_all(con: duckdb.DuckDBPyConnection, seen: Sequence[tuple[str, FetchTokens, str]]) -> None:
    """Store (source, tokens, run_id) of successful loads, in one transaction (one commit)."""
    if not seen:
        return
    rows = [_params(source, v, run_id) for source, v, run_id in seen]
    # One statement over a frame: DuckDB's executemany runs (and plans) one INSERT per row.
    frame = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    with transaction(con), staged(con, "tokens_frame", frame):
        con.execute(query_sql("save_fetch_tokens"))


_SCHEMA = {
    "source": pl.String, "method": pl.String, "url": pl.String, "request_body_sha256": pl.String, "etag": pl.String,
    "last_modified": pl.String, "version": pl.String, "requests": pl.Int64, "code_version": pl.String, "run_id": pl.String,
}  # fmt: skip


def _params(source: str, tokens: FetchTokens, run_id: str) -> dict[str, object]:
    return {
        "source": source,
        "method": tokens.method,
        "url": tokens.url,
        "request_body_sha256": tokens.request_body_sha256,
        "etag": tokens.etag,
        "last_modified": tokens.last_modified,
        "version": tokens.version,
        "requests": tokens.requests,
        "code_version": tokens.code_version,
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
