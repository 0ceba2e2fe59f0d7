"""`egress_terms`: what moving data out costs, as tiers of monthly volume
(reviewed data: schemas/reference/terms/egress_terms.csv; tiers scraped from machine-readable
price lists: `ScrapedEgressTerms`).

One row per provider, scope and tier. A tier covers [from_gb, to_gb) GB of the month's traffic
(GB = 10^9 bytes; `to_gb` NULL = unbounded) at `usd_per_gb`; tiers of one schedule follow one
another without gaps. See schemas/evidence.py for `source_url`/`verified_on`/`evidence`.
"""

from __future__ import annotations

from typing import Optional

import pandera.polars as pa
import polars as pl

from gpucat.schemas.reference import REFERENCE_DIR
from gpucat.schemas.sourced import Sourced

CSV = REFERENCE_DIR / "terms" / "egress_terms.csv"
KEY = ("provider", "scope", "tier")
SCRAPED_KEY = ("provider", "scope", "region", "tier")
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
        schedule = [c for c in cls.Config.metadata["key"] if c != "tier"]  # a scraped schedule is per region too
        previous = data.lazyframe.select(*schedule, pl.col("tier") + 1, pl.col("to_gb").alias("previous_to_gb"))
        joined = data.lazyframe.join(previous, on=[*schedule, "tier"], how="left", maintain_order="left")
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


class ScrapedEgressTerms(EgressTerms):
    """An egress tier a source scraped from a machine-readable price list, for one region.

    Checked like a reviewed tier (source, evidence, no negative price, contiguous tiers within the
    region's schedule). A price list that does not state the free allowance leaves it null: the
    `egress_terms` view takes it from the reviewed rows of the same provider and scope.
    """

    region: str = pa.Field(str_length={"min_value": 1}, description="the region whose traffic the tiers price")
    source: str = pa.Field(str_length={"min_value": 1})
    scraped_at: pl.Datetime(time_zone="UTC")  # type: ignore[valid-type]

    class Config:
        strict = True
        coerce = True
        metadata = {"key": SCRAPED_KEY, "figures": FIGURES}
