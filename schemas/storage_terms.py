"""`storage_terms`: what each kind of storage a provider sells costs and whether it survives a
stop or a terminate (reviewed data: schemas/reference/terms/storage_terms.csv; prices scraped from
machine-readable price lists: `ScrapedStorageTerms`).

One row per provider, kind and product. Prices are USD per GB-month (GB = 10^9 bytes, a month
= 730 hours); the price as published stays in `original_price` / `original_currency` /
`original_unit`. See schemas/evidence.py for `source_url`/`verified_on`/`evidence`.
"""

from __future__ import annotations

from typing import Optional

import pandera.polars as pa
import polars as pl

from gpucat.schemas.reference import REFERENCE_DIR
from gpucat.schemas.sourced import Sourced

CSV = REFERENCE_DIR / "terms" / "storage_terms.csv"
KEY = ("provider", "kind", "product")
SCRAPED_KEY = ("provider", "kind", "product", "region")
KINDS = ["container_disk", "volume", "network_volume", "object_storage", "local_nvme", "block"]
ORIGINAL_UNITS = ["GB-month", "GiB-month", "GB-hour", "GiB-hour"]
HOURS_PER_MONTH = 730
GB_PER_GIB = 1.073741824
# usd_per_gb_month = original_price x this, for prices quoted in USD.
TO_GB_MONTH = {"GB-month": 1.0, "GiB-month": 1 / GB_PER_GIB, "GB-hour": HOURS_PER_MONTH, "GiB-hour": HOURS_PER_MONTH / GB_PER_GIB}
FIGURES = (
    "usd_per_gb_month", "usd_per_gb_month_stopped", "original_price", "persists_on_stop", "persists_on_terminate",
    "billed_while_stopped", "max_size_gb", "read_throughput_mb_s",
)


class StorageTerms(Sourced):
    provider: str = pa.Field(str_matches=r"^[a-z0-9-]+$")
    kind: str = pa.Field(isin=KINDS)
    product: str = pa.Field(str_length={"min_value": 1}, description="the provider's name for it")
    usd_per_gb_month: Optional[float] = pa.Field(nullable=True, ge=0, description="USD per GB-month while running")
    usd_per_gb_month_stopped: Optional[float] = pa.Field(nullable=True, ge=0, description="USD per GB-month while the instance is stopped, where it differs or is stated")
    original_currency: Optional[str] = pa.Field(nullable=True, str_matches=r"^[A-Z]{3}$")
    original_price: Optional[float] = pa.Field(nullable=True, ge=0)
    original_unit: Optional[str] = pa.Field(nullable=True, isin=ORIGINAL_UNITS)
    persists_on_stop: Optional[bool] = pa.Field(nullable=True)
    persists_on_terminate: Optional[bool] = pa.Field(nullable=True)
    billed_while_stopped: Optional[bool] = pa.Field(nullable=True)
    max_size_gb: Optional[float] = pa.Field(nullable=True, gt=0)
    read_throughput_mb_s: Optional[float] = pa.Field(nullable=True, gt=0, description="published read throughput, MB/s (10^6 bytes)")

    @pa.dataframe_check(description="an original price has its currency and unit; a USD price has its original")
    def original_price_complete(cls, data: pa.PolarsData) -> pl.LazyFrame:
        has_original = pl.col("original_currency").is_not_null() & pl.col("original_unit").is_not_null()
        ok = (pl.col("original_price").is_null() | has_original) & (
            pl.col("usd_per_gb_month").is_null() | pl.col("original_price").is_not_null()
        )
        return data.lazyframe.select(ok.alias("ok"))

    @pa.dataframe_check(description="a USD original price converts to usd_per_gb_month (730 h a month, GiB = 1.073741824 GB)")
    def usd_matches_original(cls, data: pa.PolarsData) -> pl.LazyFrame:
        factor = pl.col("original_unit").replace_strict(TO_GB_MONTH, default=None, return_dtype=pl.Float64)
        expected = pl.col("original_price") * factor
        applies = (pl.col("original_currency") == "USD") & pl.col("usd_per_gb_month").is_not_null()
        close = ((expected - pl.col("usd_per_gb_month")).abs() <= 1e-6 + 1e-6 * expected.abs()).fill_null(False)
        return data.lazyframe.select((~applies.fill_null(False) | close).alias("ok"))

    @pa.dataframe_check(description="storage that survives a terminate also survives a stop")
    def terminate_implies_stop(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ok = ~(pl.col("persists_on_terminate").fill_null(False) & (pl.col("persists_on_stop") == False).fill_null(False))  # noqa: E712
        return data.lazyframe.select(ok.alias("ok"))

    @pa.dataframe_check(description="a stopped-rate price means storage is billed while stopped")
    def stopped_price_needs_billing(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ok = pl.col("usd_per_gb_month_stopped").is_null() | pl.col("billed_while_stopped").fill_null(False)
        return data.lazyframe.select(ok.alias("ok"))

    class Config:
        strict = True
        coerce = True
        metadata = {"key": KEY, "figures": FIGURES}


class ScrapedStorageTerms(StorageTerms):
    """A storage price a source scraped from a machine-readable price list, for one region.

    The same checks as a reviewed row (a source URL, evidence naming every figure, no negative
    price); the evidence quotes the price list's own line (SKU or meter id, price, description).
    Columns a price list does not state (persists_on_stop, ...) stay null here: the
    `storage_terms` view takes them from the reviewed row of the same provider and kind.
    """

    region: str = pa.Field(str_length={"min_value": 1}, description="the region the price list quotes")
    source: str = pa.Field(str_length={"min_value": 1})
    scraped_at: pl.Datetime(time_zone="UTC")  # type: ignore[valid-type]

    class Config:
        strict = True
        coerce = True
        metadata = {"key": SCRAPED_KEY, "figures": FIGURES}
