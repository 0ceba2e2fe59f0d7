"""`exchange_rates`: what one unit of a currency is worth in USD on a date (from a rates source such as a central bank's reference rates)."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl


class ExchangeRate(pa.DataFrameModel):
    currency: str = pa.Field(str_matches=r"^[A-Z]{3}$", description="ISO 4217 code")
    usd_per_unit: float = pa.Field(gt=0, description="USD one unit of `currency` buys")
    rate_date: pl.Date = pa.Field(description="the day the rate is for, as the publisher dates it")
    source: str
    source_url: str = pa.Field(str_startswith="https://")
    scraped_at: pl.Datetime(time_zone="UTC")  # type: ignore[valid-type]

    @pa.dataframe_check(description="USD is never converted, so it has no rate row")
    def not_usd(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("currency") != "USD").alias("ok"))

    class Config:
        strict = True
        coerce = True


KEY = ("currency", "rate_date")
