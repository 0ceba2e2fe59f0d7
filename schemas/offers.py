"""`offers`: one rentable GPU configuration at one price, as a provider publishes it."""

from __future__ import annotations

from typing import Optional

import pandera.polars as pa
import polars as pl

from schemas.reference import gpu_models

MARKETS = ["on_demand", "spot"]
AVAILABILITY = ["available", "unavailable", "unknown"]
PRICE_UNITS = ["instance_hour", "gpu_hour"]
# Within one machine: how GPUs talk to each other.
INTERCONNECTS = ["nvswitch", "nvlink", "nvlink_bridge", "pcie", "infinity_fabric", "ici", "neuronlink"]
# Between machines: what a multi-node job runs over. NULL = not supported for multi-node training.
FABRICS = ["efa", "infiniband", "roce", "ici"]
# No accelerator rents for more than this per GPU-hour; above it a unit is wrong (monthly, cents).
MAX_USD_PER_GPU_HOUR = 100.0


class Offer(pa.DataFrameModel):
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
    fx_rate_date: Optional[pl.Date] = pa.Field(nullable=True, description="date of the exchange rate a non-USD price was converted with")  # type: ignore[valid-type]
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

    class Config:
        strict = True
        coerce = True


KEY = ("provider", "offer_id")
