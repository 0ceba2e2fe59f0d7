"""`offers`: one rentable GPU configuration at one price, as a provider publishes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Optional

import pandera.polars as pa
import polars as pl

from gpucat.schemas.reference import gpu_models

MARKETS = ["on_demand", "spot"]
AVAILABILITY = ["available", "unavailable", "unknown"]
PRICE_UNITS = ["instance_hour", "gpu_hour"]
# Within one machine: how GPUs talk to each other.
INTERCONNECTS = ["nvswitch", "nvlink", "nvlink_bridge", "pcie", "infinity_fabric", "ici", "neuronlink"]
# Between machines: what a multi-node job runs over. NULL = not supported for multi-node training.
FABRICS = ["efa", "infiniband", "roce", "ici"]
# No accelerator rents for more than this per GPU-hour; above it a unit is wrong (monthly, cents).
MAX_USD_PER_GPU_HOUR = 100.0
# Memory per GPU an offer states may differ from its model's nameplate by this share: drivers
# report a little less (reserved memory, ECC), providers round, GiB vs GB. The fixtures' widest:
# OCI's B300 at 262.5 of 288 GB (-8.9%), Vultr's B200 at 192 of 180 GB (+6.7%).
NAMEPLATE_TOLERANCE = 0.10
# How far ahead of this machine's clock a fetch time may be (clock skew between hosts).
MAX_CLOCK_SKEW = timedelta(minutes=5)


def _nameplate() -> pl.Expr:
    memory = {name: model.memory_gb for name, model in gpu_models().items()}
    return pl.col("gpu_model").replace_strict(memory, default=None, return_dtype=pl.Float64)


class OfferRow(pa.DataFrameModel):
    """One row of the `offers` table as pandera checks it (the record itself is `records.Offer`)."""

    provider: str = pa.Field(str_matches=r"^[a-z0-9-]+$")
    offer_id: str = pa.Field(str_length={"min_value": 1})
    source: str
    instance_type: str = pa.Field(str_length={"min_value": 1})
    region: str = pa.Field(str_length={"min_value": 1})
    market: str = pa.Field(isin=MARKETS)
    tier: Optional[str] = pa.Field(nullable=True)
    gpu_name: str = pa.Field(description="the provider's own GPU string, before mapping")
    gpu_model: str = pa.Field(isin=sorted(gpu_models()))
    gpu_count: float = pa.Field(gt=0, description="GPUs in the offer; fractional for vGPU slices")
    gpu_memory_gb: float = pa.Field(gt=0, le=1000, description="memory of each GPU device the offer exposes, GB")
    vcpus: Optional[float] = pa.Field(nullable=True, ge=0)
    ram_gb: Optional[float] = pa.Field(nullable=True, gt=0)
    price: float = pa.Field(gt=0, description="price as quoted, in `currency` per `price_unit`")
    price_unit: str = pa.Field(isin=PRICE_UNITS)
    currency: str = pa.Field(str_matches=r"^[A-Z]{3}$")
    usd_per_hour: float = pa.Field(gt=0)
    usd_per_gpu_hour: float = pa.Field(gt=0, le=MAX_USD_PER_GPU_HOUR)
    availability: str = pa.Field(isin=AVAILABILITY)
    available_count: Optional[int] = pa.Field(nullable=True, ge=0)
    interconnect: Optional[str] = pa.Field(nullable=True, isin=INTERCONNECTS)
    fabric: Optional[str] = pa.Field(nullable=True, isin=FABRICS)
    fabric_gbps: Optional[float] = pa.Field(nullable=True, gt=0, description="inter-node bandwidth per instance, Gbit/s")
    source_url: str = pa.Field(str_startswith="https://")
    scraped_at: pl.Datetime(time_zone="UTC")  # type: ignore[valid-type]
    fx_rate_date: Optional[pl.Date] = pa.Field(nullable=True, description="date of the exchange rate a non-USD price was converted with")
    storage_usd_per_gb_month: Optional[float] = pa.Field(nullable=True, ge=0, le=10, description="the offer's own disk price")
    egress_usd_per_gb: Optional[float] = pa.Field(nullable=True, ge=0, le=10, description="the offer's own download price")
    ingress_usd_per_gb: Optional[float] = pa.Field(nullable=True, ge=0, le=10, description="the offer's own upload price")
    price_excludes: Optional[str] = pa.Field(nullable=True, description="what the price leaves out, priced")

    @pa.dataframe_check(description="a non-USD price names the date of the rate that converted it; a USD price names none")
    def fx_rate_date_iff_converted(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(((pl.col("currency") == "USD") == pl.col("fx_rate_date").is_null()).alias("ok"))

    @pa.dataframe_check(description="per-GPU price times GPU count equals the offer price")
    def prices_consistent(cls, data: pa.PolarsData) -> pl.LazyFrame:
        expected = pl.col("usd_per_gpu_hour") * pl.col("gpu_count")
        # Prices are rounded to 1e-6 USD, so allow a hundredth of a cent of slack.
        return data.lazyframe.select(((expected - pl.col("usd_per_hour")).abs() <= 1e-4).alias("ok"))

    @pa.dataframe_check(description="memory per GPU matches the model's nameplate (a fraction of a GPU may have less, never more)")
    def memory_matches_nameplate(cls, data: pa.PolarsData) -> pl.LazyFrame:
        ratio = pl.col("gpu_memory_gb") / _nameplate()
        whole = (ratio - 1).abs() <= NAMEPLATE_TOLERANCE
        slice_ = ratio <= 1 + NAMEPLATE_TOLERANCE
        return data.lazyframe.select(pl.when(pl.col("gpu_count") >= 1).then(whole).otherwise(slice_).fill_null(False).alias("ok"))

    @pa.dataframe_check(description="vCPUs and RAM, where stated, are finite and positive (no NaN, no Infinity)")
    def host_specs_finite(cls, data: pa.PolarsData) -> pl.LazyFrame:
        def finite_positive(name: str) -> pl.Expr:
            return pl.col(name).is_null() | (pl.col(name).is_finite() & (pl.col(name) > 0))

        return data.lazyframe.select((finite_positive("vcpus") & finite_positive("ram_gb")).alias("ok"))

    @pa.dataframe_check(description="GPU count, memory and every price are finite (no NaN, no Infinity)")
    def figures_finite(cls, data: pa.PolarsData) -> pl.LazyFrame:
        columns = ["gpu_count", "gpu_memory_gb", "price", "usd_per_hour", "usd_per_gpu_hour"]
        return data.lazyframe.select(pl.all_horizontal([pl.col(c).is_finite() for c in columns]).fill_null(False).alias("ok"))

    @pa.dataframe_check(description="fetched no later than now (plus a small clock skew): data from the future never goes stale")
    def scraped_not_in_future(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("scraped_at") <= datetime.now(UTC) + MAX_CLOCK_SKEW).alias("ok"))

    class Config:
        strict = True
        coerce = True


KEY = ("provider", "offer_id")
