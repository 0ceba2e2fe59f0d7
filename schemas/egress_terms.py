"""`egress_terms`: what moving data out costs, as tiers of monthly volume
(reviewed data: schemas/reference/terms/egress_terms.csv).

One row per provider, scope and tier. A tier covers [from_gb, to_gb) GB of the month's traffic
(GB = 10^9 bytes; `to_gb` NULL = unbounded) at `usd_per_gb`; tiers of one schedule follow one
another without gaps. See schemas/evidence.py for `source_url`/`verified_on`/`evidence`.
"""

from __future__ import annotations

from typing import Optional

import pandera.polars as pa
import polars as pl

from schemas.sourced import Sourced
from schemas.reference import REFERENCE_DIR

CSV = REFERENCE_DIR / "terms" / "egress_terms.csv"
KEY = ("provider", "scope", "tier")
SCOPES = ["internet", "inter_region", "in_region", "object_storage", "filesystem"]
ORIGINAL_UNITS = ["GB", "GiB"]
FIGURES = ("from_gb", "to_gb", "usd_per_gb", "original_price", "free_allowance_gb_month")


class EgressTerms(Sourced):
    provider: str = pa.Field(str_matches=r"^[a-z0-9-]+$")
    scope: str = pa.Field(isin=SCOPES, description="where the data goes")
    tier: int = pa.Field(ge=1)
    from_gb: Optional[float] = pa.Field(nullable=True, ge=0)
    to_gb: Optional[float] = pa.Field(nullable=True, gt=0)
    usd_per_gb: Optional[float] = pa.Field(nullable=True, ge=0)
    original_price: Optional[float] = pa.Field(nullable=True, ge=0, description="USD per original_unit as published")
    original_unit: Optional[str] = pa.Field(nullable=True, isin=ORIGINAL_UNITS)
    free_allowance_gb_month: Optional[float] = pa.Field(nullable=True, ge=0)

    @pa.dataframe_check(description="a tier starts below where it ends")
    def tier_ordered(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ok = pl.col("from_gb").is_null() | pl.col("to_gb").is_null() | (pl.col("from_gb") < pl.col("to_gb"))
        return data.lazyframe.select(ok.alias("ok"))

    @pa.dataframe_check(description="each tier starts where the previous tier of its schedule ends")
    def tiers_contiguous(cls, data: pa.PolarsData) -> pl.LazyFrame:
        previous = data.lazyframe.select("provider", "scope", pl.col("tier") + 1, pl.col("to_gb").alias("previous_to_gb"))
        joined = data.lazyframe.join(previous, on=["provider", "scope", "tier"], how="left", maintain_order="left")
        ok = pl.col("previous_to_gb").is_null() | pl.col("from_gb").is_null() | (pl.col("from_gb") == pl.col("previous_to_gb"))
        return joined.select(ok.alias("ok"))

    @pa.dataframe_check(description="an original price has its unit")
    def original_price_complete(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ok = pl.col("original_price").is_null() | pl.col("original_unit").is_not_null()
        return data.lazyframe.select(ok.alias("ok"))

    class Config:
        strict = True
        coerce = True
        metadata = {"key": KEY, "figures": FIGURES}
