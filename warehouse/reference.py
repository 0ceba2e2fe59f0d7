"""Reference tables as the code ships them, loaded only when what they come from changed.

Each reference table comes from a file in the repo (a CSV checked by its pandera model, or the
schedules file). Validating and rewriting all of them cost a fixtures refresh about a sixth of
its time on every run, so each carries a digest of its inputs: the file, the module that
defines its model, and the newest migration (which may reshape the table). The warehouse keeps
the digest each table was loaded from (`reference_digests`, migration 102); a refresh builds,
validates and writes only the tables whose digest differs (`db.load_changed_reference`).

A new warehouse has no digests, so it would validate every CSV again (a third of a second, a
tenth of a fixtures refresh into a new file). Given a cache folder, a CSV's validated frame is
kept there as Parquet under its digest and the versions of polars and pandera that made it:
the same inputs validate to the same frame, so a later new warehouse reads it back instead.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandera
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


def csv_reference(path: Path, model: type[pa.DataFrameModel], cache: Path | None = None) -> Reference:
    """A CSV checked against its pandera model; its digest covers the CSV and the model's module.

    With `cache`, the validated frame is kept in that folder and read back by the next build."""
    module = inspect.getsourcefile(model)
    key = digest(path, *([Path(module)] if module else []))
    build = partial(_validated, path, model)
    if cache is None:
        return Reference(key, build)
    made_by = digest(f"polars {pl.__version__}", f"pandera {pandera.__version__}")[:16]
    return Reference(key, partial(cached_frame, cache / f"{path.stem}-{key[:32]}-{made_by}.parquet", build))


def _validated(path: Path, model: type[pa.DataFrameModel]) -> pl.DataFrame:
    return model.validate(pl.read_csv(path, infer_schema_length=None))


def cached_frame(file: Path, build: Callable[[], pl.DataFrame]) -> pl.DataFrame:
    """The frame kept in `file`, else `build()`'s, kept there for next time (best effort: a cache
    that cannot be read or written costs a rebuild, never the refresh)."""
    try:
        return pl.read_parquet(file)
    except (OSError, pl.exceptions.PolarsError):
        pass
    frame = build()
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, partial_name = tempfile.mkstemp(prefix=file.name, suffix=".part", dir=file.parent)
        os.close(fd)
        try:
            frame.write_parquet(partial_name)
            os.replace(partial_name, file)  # whole or absent: a concurrent refresh never reads half a file
        finally:
            Path(partial_name).unlink(missing_ok=True)
    except (OSError, pl.exceptions.PolarsError):
        pass
    return frame
