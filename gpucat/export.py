"""Parquet snapshots of every table and view, with a manifest a reader can verify.

Layout: `<out>/snapshot=<UTC timestamp>/<relation>.parquet` plus `manifest.json` holding each
file's row count, column schema, size and sha256. Rows are written in a total order
(ORDER BY ALL) so the same data gives the same rows in the same order.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow.parquet as pq

from gpucat import __version__
from gpucat.schemas.errors import GpucatError, UserInputError

MANIFEST = "manifest.json"
T = TypeVar("T")
SNAPSHOT_FORMAT = "%Y-%m-%dT%H%M%SZ"


@dataclass(frozen=True)
class Snapshot:
    path: Path
    manifest: dict[str, Any]


def relations(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    rows = con.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        "WHERE table_schema = 'main' ORDER BY table_name"
    ).fetchall()
    return [(name, "view" if kind == "VIEW" else "table") for name, kind in rows]


def export_snapshot(con: duckdb.DuckDBPyConnection, out: Path, now: datetime | None = None) -> Snapshot:
    """Write the snapshot into a hidden temporary folder beside it, then rename it into place:
    a reader never sees a snapshot without its manifest, and a failure leaves nothing behind."""
    taken = (now or datetime.now(UTC)).astimezone(UTC)
    # A folder name hive readers parse as a UTC time (polars' scan_parquet(hive_partitioning=True)
    # reads 2026-12-02T012406Z as one, and fails on the compact 20261202T012406Z); no colons, so
    # it is a valid name on every file system.
    final = out / f"snapshot={taken.strftime(SNAPSHOT_FORMAT)}"
    if final.exists():
        raise UserInputError(f"{final} already exists")
    if out.exists() and not out.is_dir():
        raise UserInputError(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=out))
    except OSError as exc:
        raise UserInputError(f"cannot write under {out}: {exc.strerror or exc}") from None
    try:
        manifest = _pinned(con, lambda: _write(con, staging, final.name, taken))
        staging.rename(final)
    except OSError as exc:  # a full disk, a folder gone: nothing left behind, one line
        shutil.rmtree(staging, ignore_errors=True)
        raise GpucatError(f"cannot write the snapshot under {out}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Snapshot(final, manifest)


def _pinned(con: duckdb.DuckDBPyConnection, write: Callable[[], T]) -> T:
    """`write()` inside one read transaction: every relation comes from the same snapshot, on the
    file and on a lake (DuckLake pins a transaction to the snapshot it started on), however many
    refreshes commit meanwhile."""
    con.execute("BEGIN TRANSACTION")
    try:
        return write()
    finally:
        con.execute("ROLLBACK")


def _write(con: duckdb.DuckDBPyConnection, folder: Path, snapshot_name: str, taken: datetime) -> dict[str, Any]:
    entries = []
    # Views that age rows against now (current_offers.age_hours) age them to the snapshot's time.
    con.execute("SET VARIABLE gpucat_now = CAST($now AS TIMESTAMPTZ)", {"now": taken})
    for name, kind in relations(con):
        # `name` comes from DuckDB's own catalog, never from the user.
        table = con.sql(f'SELECT * FROM "{name}" ORDER BY ALL').to_arrow_table()
        path = folder / f"{name}.parquet"
        pq.write_table(table, path, compression="zstd")
        entries.append(
            {
                "name": name,
                "kind": kind,
                "file": path.name,
                "rows": table.num_rows,
                "bytes": path.stat().st_size,
                "sha256": _sha256(path),
                "schema": [{"name": f.name, "type": str(f.type)} for f in table.schema],
            }
        )
    manifest = {
        "snapshot": snapshot_name.split("=", 1)[1],
        "created_at": taken.isoformat(),
        "gpucat_version": __version__,
        "relations": entries,
        "relations_sha256": _entries_digest(entries),
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def verify_snapshot(folder: Path) -> list[str]:
    """Problems found (empty when every file matches its manifest entry)."""
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise UserInputError(f"{folder} has no {MANIFEST}")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        listed = [entry["file"] for entry in manifest["relations"]]
    except (ValueError, KeyError, TypeError) as exc:
        return [f"{MANIFEST}: unreadable or incomplete ({type(exc).__name__}: {exc})"]
    present = sorted(p.name for p in folder.iterdir() if p.name != MANIFEST)
    problems = [f"{name}: not in the manifest" for name in present if name not in listed]
    if manifest.get("relations_sha256") != _entries_digest(manifest["relations"]):
        problems.append(f"{MANIFEST}: its relations list was edited (an entry added, removed or changed)")
    for entry in manifest["relations"]:
        path = folder / entry["file"]
        if not path.is_file():
            problems.append(f"{entry['file']}: missing")
            continue
        if _sha256(path) != entry["sha256"]:
            problems.append(f"{entry['file']}: sha256 differs from the manifest")
        try:
            rows = pq.ParquetFile(path).metadata.num_rows
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            problems.append(f"{entry['file']}: not readable as Parquet ({exc})")
            continue
        if rows != entry["rows"]:
            problems.append(f"{entry['file']}: {rows} rows, manifest says {entry['rows']}")
    return problems


def _entries_digest(entries: list[dict[str, Any]]) -> str:
    """A digest over the manifest's own entries, so removing a file with its entry is noticed."""
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
