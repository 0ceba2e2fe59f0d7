"""Reference data shipped in the repo (facts, with their sources), read once per process."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REFERENCE_DIR = Path(__file__).parent / "reference"
GPU_MODELS_CSV = REFERENCE_DIR / "gpu_models.csv"
GPU_PRICE_BOUNDS_CSV = REFERENCE_DIR / "gpu_price_bounds.csv"
GPU_FORM_DEFAULTS_CSV = REFERENCE_DIR / "gpu_form_defaults.csv"


@dataclass(frozen=True)
class GpuModel:
    gpu_model: str
    vendor: str
    family: str
    form_factor: str
    memory_gb: float
    bf16: bool
    bnb_4bit: bool
    memory_type: str = ""


@cache
def gpu_models() -> dict[str, GpuModel]:
    """Canonical accelerators by `gpu_model`; every offer's `gpu_model` must be one of these."""
    with GPU_MODELS_CSV.open(newline="", encoding="utf-8") as fh:
        return {
            row["gpu_model"]: GpuModel(
                gpu_model=row["gpu_model"],
                vendor=row["vendor"],
                family=row["family"],
                form_factor=row["form_factor"],
                memory_gb=float(row["memory_gb"]),
                bf16=row["bf16"] == "true",
                bnb_4bit=row["bnb_4bit"] == "true",
                memory_type=row["memory_type"],
            )
            for row in csv.DictReader(fh)
        }


@dataclass(frozen=True)
class PriceBounds:
    """The widest USD per GPU-hour a GPU model plausibly rents for, and where the figures come from."""

    gpu_model: str
    min_usd_per_gpu_hour: float
    max_usd_per_gpu_hour: float
    source: str


@cache
def gpu_price_bounds() -> dict[str, PriceBounds]:
    """Absolute price bounds by `gpu_model`, reviewed reference data outside the catalog being judged:
    the lowest and highest prices seen in the providers' own captures, widened 4x each way.
    A model without a row has no absolute bound (only the catalog's checks judge it)."""
    with GPU_PRICE_BOUNDS_CSV.open(newline="", encoding="utf-8") as fh:
        return {
            row["gpu_model"]: PriceBounds(row["gpu_model"], float(row["min_usd_per_gpu_hour"]), float(row["max_usd_per_gpu_hour"]), row["source"])
            for row in csv.DictReader(fh)
        }


@cache
def gpu_form_defaults() -> dict[tuple[str, str], str]:
    """(provider, family key) -> the gpu_model a provider's own documentation says it sells when
    its answer names the family alone (each row cites that documentation in `source`)."""
    with GPU_FORM_DEFAULTS_CSV.open(newline="", encoding="utf-8") as fh:
        return {(row["provider"], row["family_key"]): row["gpu_model"] for row in csv.DictReader(fh)}
