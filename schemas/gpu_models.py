"""`gpu_models`: the canonical accelerators every offer maps to (reference data in the repo)."""

from __future__ import annotations

from typing import Optional

import pandera.polars as pa


class GpuModelRow(pa.DataFrameModel):
    gpu_model: str = pa.Field(unique=True, str_matches=r"^[A-Za-z0-9][A-Za-z0-9-]*$")
    vendor: str = pa.Field(isin=["NVIDIA", "AMD", "Intel", "Google", "AWS"])
    family: str
    architecture: str
    # ASIC: a vendor's own accelerator chip sold only inside its instances (AWS Trainium, Inferentia).
    # Unstated: a `-AnyForm` stand-in for a card sold without its form factor (scrapers/_gpus.py).
    form_factor: str = pa.Field(isin=["SXM", "PCIe", "NVL", "OAM", "Superchip", "TPU", "ASIC", "Unstated"])
    memory_gb: float = pa.Field(gt=0, le=1000)
    memory_type: str
    # Empty where no source states it (the row's notes say so); never estimated.
    memory_bandwidth_gbps: Optional[float] = pa.Field(nullable=True, gt=0)
    bf16_tflops: Optional[float] = pa.Field(nullable=True, gt=0)
    fp16_tflops: Optional[float] = pa.Field(nullable=True, gt=0)
    bf16: bool
    fp8: bool
    int8: bool
    int4: bool
    bnb_4bit: bool
    nvlink_gbps: Optional[float] = pa.Field(nullable=True, gt=0)
    notes: Optional[str] = pa.Field(nullable=True)
    source: str = pa.Field(str_length={"min_value": 3})

    @pa.dataframe_check(description="a card with bf16 TFLOPS supports bf16")
    def bf16_flag_matches(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        return data.lazyframe.select((pl.col("bf16_tflops").is_null() | pl.col("bf16")).alias("ok"))

    class Config:
        strict = True
        coerce = True
