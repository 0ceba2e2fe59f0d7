"""`interruption_rates`: how often a spot instance is reclaimed, as a band, with its savings."""

from __future__ import annotations

from typing import Optional

import pandera.polars as pa
import polars as pl


class InterruptionRate(pa.DataFrameModel):
    provider: str = pa.Field(str_matches=r"^[a-z0-9-]+$")
    region: str = pa.Field(str_length={"min_value": 1})
    instance_type: str = pa.Field(str_length={"min_value": 1})
    os: str = pa.Field(isin=["Linux", "Windows"])
    source: str
    interruption_band: str = pa.Field(description='band as published, e.g. "<5%"')
    band_lower_pct: float = pa.Field(ge=0, le=100)
    band_upper_pct: float = pa.Field(gt=0, le=100)
    savings_pct: Optional[float] = pa.Field(nullable=True, ge=0, le=100, description="spot discount vs on-demand, %")
    source_url: str = pa.Field(str_startswith="https://")
    scraped_at: pl.Datetime(time_zone="UTC")  # type: ignore[valid-type]

    @pa.dataframe_check(description="band bounds are ordered")
    def band_ordered(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("band_lower_pct") < pl.col("band_upper_pct")).alias("ok"))

    class Config:
        strict = True
        coerce = True


KEY = ("provider", "region", "instance_type", "os")
