"""`Sourced`: the provenance every reviewed terms row carries, and the checks that keep it honest.

A table model subclasses it and names its natural key and its figure columns in
`Config.metadata`; the quote format and the checks themselves live in `schemas/evidence.py`.
"""

from __future__ import annotations

from typing import Any, Optional

import pandera.polars as pa
import polars as pl

from gpucat.schemas import evidence


def _metadata(model: Any) -> dict[str, Any]:
    """A table model's `Config.metadata` (its natural key and figure columns); every subclass sets it."""
    metadata = model.Config.metadata
    if metadata is None:
        raise TypeError(f"{model.__name__} names no key and figures in Config.metadata")
    return metadata


class Sourced(pa.DataFrameModel):
    """Each table names its natural key and figure columns in `Config.metadata`
    (`{"key": (...), "figures": (...)}`): pandera reads class attributes as columns."""

    source_url: str = pa.Field(str_startswith="https://")
    verified_on: str = pa.Field(str_matches=evidence.ISO_DATE, description="day the figures were checked against source_url (YYYY-MM-DD)")
    evidence: Optional[str] = pa.Field(nullable=True)
    notes: Optional[str] = pa.Field(nullable=True)

    @pa.dataframe_check(description="the natural key is unique")
    def key_unique(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((~pl.struct(list(_metadata(cls)["key"])).is_duplicated()).alias("ok"))

    @pa.dataframe_check(description="evidence is `columns: \"quote\" <https://url>` segments joined by ' || '")
    def evidence_well_formed(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(evidence.evidence_well_formed())

    @pa.dataframe_check(description="every non-null figure is named by an evidence segment")
    def figures_quoted(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(evidence.figures_quoted(_metadata(cls)["figures"]))

    @pa.dataframe_check(description="a row without evidence says in notes what was not found")
    def unsourced_rows_explained(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(evidence.unsourced_rows_explained())

    @pa.dataframe_check(description="verified_on is not in the future")
    def verified_on_plausible(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(evidence.verified_on_plausible())
