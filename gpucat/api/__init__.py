"""The Python API: `gpucat.offers`, `gpucat.fit`, `gpucat.cost` and `gpucat.memory`.

Each takes the filters and training options of the command of the same name, as keyword
arguments spelled like the options (`--min-gpu-memory` is `min_gpu_memory`, `--seq-len` is
`seq_len`), opens the database by itself (`db=`, else `$GPUCAT_WAREHOUSE`, `$GPUCAT_DB`, else
the user data directory's gpucat.duckdb, as the commands) read-only on the clock of `$GPUCAT_NOW` when set, and calls the same
library functions the command does. Rows come back typed (`OfferRow`, `FitRow`, `CostRow`), or as
a polars DataFrame with `as_frame=True`. `fit` and `cost` take `format="sky"|"dstack"` to return
the chosen configuration as a task spec instead (`gpucat.launch`).

This is an edge, like the command line: it reads gpucat's environment variables here and passes
them down. `gpucat/__init__.py` loads this module on first use, so `import gpucat` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpucat.cost.rank import CostRow
from gpucat.memory import MemoryEstimate, TrainingRequest
from gpucat.schemas.errors import UserInputError
from gpucat.schemas.settings import Settings

if TYPE_CHECKING:
    import duckdb
    import polars as pl

MARKETS = {None: None, "spot": "spot", "on_demand": "on_demand", "on-demand": "on_demand"}
COST_MARKETS = {"on_demand": ("on_demand",), "on-demand": ("on_demand",), "spot": ("spot",), "both": ("on_demand", "spot")}
TRAINING_FIELDS = tuple(f.name for f in fields(TrainingRequest))


@dataclass(frozen=True)
class OfferRow:
    """One current offer, as `gpucat offers` lists it (the columns of warehouse/sql/offers.sql)."""

    provider: str
    instance_type: str
    region: str
    market: str
    tier: str | None
    gpu_model: str
    gpu_count: float
    gpu_memory_gb: float
    vcpus: float | None
    ram_gb: float | None
    usd_per_hour: float
    usd_per_gpu_hour: float
    currency: str
    availability: str
    available_count: int | None
    interconnect: str | None
    fabric: str | None
    fabric_gbps: float | None
    offer_id: str
    source: str
    source_url: str
    scraped_at: datetime
    age_hours: float | None
    is_stale: bool
    replayed: bool


@dataclass(frozen=True)
class FitRow:
    """One configuration a job fits on, as `gpucat fit` lists it (warehouse/sql/fit.sql's columns
    and the decision `gpucat.fit.fit` adds: the need per GPU, fits or tight, and the notes)."""

    provider: str
    offer_id: str
    instance_type: str
    region: str
    market: str
    tier: str | None
    gpu_model: str
    gpu_count: float
    gpu_memory_gb: float
    usd_per_hour: float
    usd_per_gpu_hour: float
    availability: str
    interconnect: str | None
    fabric: str | None
    nodes: int
    gpus_total: float
    usd_per_hour_total: float
    need_gb_per_gpu: float
    usable_gb_per_gpu: float
    storage_usd_per_gb_month: float | None
    egress_usd_per_gb: float | None
    price_excludes: Any
    gpu_bf16: bool
    gpu_bnb_4bit: bool
    source_url: str
    scraped_at: datetime
    fit: str
    need_gb_per_gpu_low: float | None
    need_gb_per_gpu_high: float | None
    notes: list[str]


def offers(
    *,
    gpu: str | Iterable[str] = (),
    provider: str | Iterable[str] = (),
    min_gpu_memory: float | None = None,
    max_price: float | None = None,
    market: str | None = None,
    available: bool = False,
    include_stale: bool = False,
    limit: int | None = 50,
    db: str | Path | None = None,
    as_frame: bool = False,
) -> list[OfferRow] | pl.DataFrame:
    """Current offers, cheapest per GPU-hour first, like `gpucat offers` (`limit=None`: all).

    `gpu` takes the names `--gpu` takes (`H100`, `A100-80GB`, `H100:8`); `market` is "spot",
    "on_demand" or None (both)."""
    from gpucat import catalog, suggest
    from gpucat.gpu_names import resolve_gpus

    gpus, gpu_count = resolve_gpus(_names(gpu))
    providers = _names(provider)
    suggest.check_providers(providers)
    if limit is not None and limit < 1:
        raise UserInputError(f"limit must be at least 1 (or None for every offer), got {limit}")
    with _open(db) as con:
        result = catalog.offers(con, gpus=gpus, providers=providers, min_gpu_memory_gb=min_gpu_memory,
                                max_usd_per_gpu_hour=max_price, market=_market(market), available_only=available,
                                include_stale=include_stale, gpu_count=gpu_count, limit=limit)  # fmt: skip
    rows = [OfferRow(**record) for record in result.records()]
    return _frame(rows, OfferRow) if as_frame else rows


def fit(
    *,
    headroom: float = 0.1,
    max_gpus: int = 64,
    market: str | None = None,
    provider: str | Iterable[str] = (),
    available: bool = False,
    include_stale: bool = False,
    risk: str = "safe",
    limit: int = 30,
    format: str | None = None,  # noqa: A002 - the option's name
    pick: int = 1,
    db: str | Path | None = None,
    as_frame: bool = False,
    **training: Any,
) -> list[FitRow] | pl.DataFrame | str:
    """The configurations a job fits on, cheapest per hour first, like `gpucat fit`.

    `training` takes the training options (`model`, `method`, `batch`, `seq_len`, `sharding`, ...)
    by their option names; `format="sky"` or `"dstack"` returns the task spec (YAML text) of row
    `pick` (1: the cheapest), like `--format` and `--pick`."""
    from gpucat import suggest
    from gpucat.fit import FitOptions
    from gpucat.fit import fit as fit_offers

    request, arch = _training(training, default_sharding="fsdp")
    settings = request.settings(arch)
    providers = _names(provider)
    suggest.check_providers(providers)
    options = FitOptions(headroom=headroom, max_gpus=max_gpus, market=_market(market), providers=providers,
                         available_only=available, include_stale=include_stale, limit=max(limit, pick) if format else limit,
                         risk=risk)  # fmt: skip
    with _open(db) as con:
        result = fit_offers(con, arch, settings, options)
    rows = [FitRow(**row) for row in result.rows]
    if format is not None:
        from gpucat import launch
        from gpucat.cost.sizes import kept_on_disk_gb

        target = launch.fit_target(launch.picked(rows, pick), kept_on_disk_gb(arch, settings))
        return launch.spec(target, format, f"{arch.alias}-{settings.method}")
    return _frame(rows, FitRow) if as_frame else rows


def cost(
    *,
    tokens: str | float,
    epochs: float = 1.0,
    market: str = "on_demand",
    checkpoint_every: str | float = "30m",
    retention: str | float = "7d",
    dataset_gb: float | None = None,
    provider: str | Iterable[str] = (),
    available: bool = False,
    include_stale: bool = False,
    headroom: float = 0.1,
    max_gpus: int = 64,
    top: int = 20,
    format: str | None = None,  # noqa: A002 - the option's name
    pick: int = 1,
    db: str | Path | None = None,
    as_frame: bool = False,
    **training: Any,
) -> list[CostRow] | pl.DataFrame | str:
    """What the whole job costs on each configuration it fits, cheapest first, like `gpucat cost`.

    `tokens` is a count or the option's text (`"100M"`); `market` is "on_demand" (the default),
    "spot" or "both"; durations are the options' text (`"30m"`, `"7d"`) or hours. Unlike the
    command, nothing is saved to `job_costs` (the database is opened read-only). `format` and
    `pick` as in `fit`; the disk holds the job's dataset, weights and checkpoints."""
    from gpucat.cost.parse import duration_hours, token_count
    from gpucat.cost.rank import CostOptions, job_costs

    if market not in COST_MARKETS:
        raise UserInputError(f"market must be one of on_demand, spot, both, got {market!r}")
    request, arch = _training(training, default_sharding="fsdp")
    settings = request.settings(arch)
    options = CostOptions(
        tokens=token_count(str(tokens)),
        epochs=epochs,
        markets=COST_MARKETS[market],
        checkpoint_every_h=duration_hours(str(checkpoint_every), "checkpoint_every", default_unit="h"
                                          if not isinstance(checkpoint_every, str) else "m"),
        retention_h=duration_hours(str(retention), "retention", default_unit="h" if not isinstance(retention, str) else "d",
                                   allow_zero=True),
        dataset_gb=dataset_gb,
        providers=_names(provider),
        top=max(top, pick) if format else top,
        headroom=headroom,
        max_gpus=max_gpus,
        available_only=available,
        include_stale=include_stale,
    )
    with _open(db) as con:
        result = job_costs(con, arch, settings, options)
    if format is not None:
        from gpucat import launch

        target = launch.cost_target(launch.picked(result.rows, pick), result.sizes.storage_gb)
        return launch.spec(target, format, f"{arch.alias}-{settings.method}")
    if as_frame:
        import polars as pl

        return pl.DataFrame([row.as_json() for row in result.rows], infer_schema_length=None)
    return result.rows


def memory(*, as_frame: bool = False, **training: Any) -> MemoryEstimate | pl.DataFrame:
    """The peak memory per GPU of a fine-tuning run, like `gpucat memory` (no database needed).

    With `as_frame=True`, one row per component of the peak: `component`, `gb`."""
    from gpucat.memory import estimate_memory

    request, arch = _training(training, default_sharding="fsdp")
    estimate = estimate_memory(arch, request.settings(arch))
    if as_frame:
        import polars as pl

        return pl.DataFrame({"component": list(estimate.breakdown), "gb": list(estimate.breakdown.values())})
    return estimate


def _names(value: str | Iterable[str]) -> list[str]:
    """One name, a list, or comma-separated text, as the repeated options take them."""
    values = [value] if isinstance(value, str) else list(value)
    return [v.strip() for item in values for v in str(item).split(",") if v.strip()]


def _market(value: str | None) -> str | None:
    if value not in MARKETS:
        raise UserInputError(f"market must be 'spot', 'on_demand' or None, got {value!r}")
    return MARKETS[value]


def _training(options: dict[str, Any], *, default_sharding: str) -> tuple[TrainingRequest, Any]:
    unknown = sorted(set(options) - set(TRAINING_FIELDS))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    if "config" in options and options["config"] is not None:
        options = {**options, "config": Path(options["config"])}
    request = TrainingRequest(**{"sharding": default_sharding, **options})
    return request, request.arch(settings=Settings.from_env())  # the API's edge: the Hub cache and offline mode


def clock() -> datetime | None:
    """`$GPUCAT_NOW` (ISO 8601, UTC unless it says) when set, else None: the database's now()."""
    return Settings.from_env().now


def _open(db: str | Path | None) -> duckdb.DuckDBPyConnection:
    from gpucat.warehouse.db import connect, db_path

    settings = Settings.from_env()  # this call is the edge: gpucat's settings are read once, here
    return connect(db_path(db, settings), read_only=True, now=settings.now)


def _frame(rows: Sequence[Any], kind: type) -> pl.DataFrame:
    import polars as pl

    names = [f.name for f in fields(kind)]
    if not rows:
        return pl.DataFrame({name: [] for name in names})
    return pl.DataFrame([asdict(r) for r in rows], infer_schema_length=None).select(names)


__all__ = ["CostRow", "FitRow", "MemoryEstimate", "OfferRow", "cost", "fit", "memory", "offers"]
