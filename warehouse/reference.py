"""Reference tables as the code ships them, loaded only when what they come from changed.

Each reference table comes from a file in the repo (a CSV checked by its pandera model, or the
schedules file). Validating and rewriting all of them cost a fixtures refresh about a sixth of
its time on every run, so each carries a digest of its inputs: the file, the module that
defines its model, and the newest migration (which may reshape the table). The warehouse keeps
the digest each table was loaded from (`reference_digests`, migration 102); a refresh builds,
validates and writes only the tables whose digest differs (`db.load_changed_reference`).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandera.polars as pa
import polars as pl


@dataclass(frozen=True)
class Reference:
    """One reference table: the digest of what its rows come from, and how to build them (validated)."""

    digest: str
    frame: Callable[[], pl.DataFrame]


def digest(*inputs: Path | str) -> str:
    """A digest of files (by content) and strings, in order."""
    h = hashlib.sha256()
    for item in inputs:
        h.update(item.read_bytes() if isinstance(item, Path) else item.encode())
        h.update(b"\0")
    return h.hexdigest()


def csv_reference(path: Path, model: type[pa.DataFrameModel]) -> Reference:
    """A CSV checked against its pandera model; its digest covers the CSV and the model's module."""
    module = inspect.getsourcefile(model)
    return Reference(digest(path, *([Path(module)] if module else [])), lambda: model.validate(pl.read_csv(path, infer_schema_length=None)))
