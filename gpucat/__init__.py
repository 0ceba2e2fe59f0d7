"""gpucat: a provider catalog of rented GPUs for fine-tuning, in DuckDB."""

__version__ = "0.1.0"
