"""`providers`: one row of terms per provider — billing increment, stopped-instance billing,
spot, environment and multi-node fabric (reviewed data: schemas/reference/terms/providers.csv).

Units: seconds, USD, Gbit/s. See schemas/evidence.py for `source_url`/`verified_on`/`evidence`.
"""

from __future__ import annotations

from typing import Optional

import pandera.polars as pa
import polars as pl

from gpucat.schemas.offers import FABRICS, PRICE_UNITS
from gpucat.schemas.reference import REFERENCE_DIR
from gpucat.schemas.sourced import Sourced

CSV = REFERENCE_DIR / "terms" / "providers.csv"
KEY = ("provider",)
SPOT_DISK_FATES = ["kept", "deleted", "configurable"]
PRICE_BASES = [unit.removesuffix("_hour") for unit in PRICE_UNITS]  # instance | gpu
# Columns that state a fact about the provider and so need a quote when not null.
FIGURES = (
    "billing_increment_s", "min_charge_s", "min_charge_usd", "stopped_instances_billed", "spot_offered",
    "spot_notice_s", "spot_disk_fate", "ssh", "custom_docker", "jupyter", "multi_node", "fabric",
    "fabric_gbps_per_node", "price_basis",
)


class ProviderTerms(Sourced):
    provider: str = pa.Field(unique=True, str_matches=r"^[a-z0-9-]+$")
    display_name: str = pa.Field(str_length={"min_value": 1})
    billing_increment_s: Optional[int] = pa.Field(nullable=True, gt=0, description="compute is billed in steps of this many seconds")
    min_charge_s: Optional[int] = pa.Field(nullable=True, ge=0, description="shortest billed run, seconds")
    min_charge_usd: Optional[float] = pa.Field(nullable=True, ge=0, description="smallest charge per run, USD")
    stopped_instances_billed: Optional[bool] = pa.Field(nullable=True, description="the compute rate keeps running while stopped")
    spot_offered: Optional[bool] = pa.Field(nullable=True)
    spot_notice_s: Optional[int] = pa.Field(nullable=True, ge=0, description="warning before a spot reclaim, seconds")
    spot_disk_fate: Optional[str] = pa.Field(nullable=True, isin=SPOT_DISK_FATES)
    ssh: Optional[bool] = pa.Field(nullable=True)
    custom_docker: Optional[bool] = pa.Field(nullable=True)
    jupyter: Optional[bool] = pa.Field(nullable=True)
    multi_node: Optional[bool] = pa.Field(nullable=True)
    fabric: Optional[str] = pa.Field(nullable=True, isin=FABRICS)
    fabric_gbps_per_node: Optional[float] = pa.Field(nullable=True, gt=0, description="inter-node bandwidth, Gbit/s")
    price_basis: Optional[str] = pa.Field(nullable=True, isin=PRICE_BASES)

    @pa.dataframe_check(description="spot notice and disk fate only where spot is offered")
    def spot_details_need_spot(cls, data: pa.PolarsData) -> pl.LazyFrame:
        details = pl.col("spot_notice_s").is_not_null() | pl.col("spot_disk_fate").is_not_null()
        return data.lazyframe.select((~details | pl.col("spot_offered").fill_null(False)).alias("ok"))

    @pa.dataframe_check(description="a fabric bandwidth needs a fabric")
    def bandwidth_needs_fabric(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((pl.col("fabric_gbps_per_node").is_null() | pl.col("fabric").is_not_null()).alias("ok"))

    @pa.dataframe_check(description="a minimum charge is none (0) or at least one billing increment")
    def minimum_covers_increment(cls, data: pa.PolarsData) -> pl.LazyFrame:
        minimum, step = pl.col("min_charge_s"), pl.col("billing_increment_s")
        ok = minimum.is_null() | step.is_null() | (minimum == 0) | (minimum >= step)
        return data.lazyframe.select(ok.alias("ok"))

    class Config:
        strict = True
        coerce = True
        metadata = {"key": KEY, "figures": FIGURES}
