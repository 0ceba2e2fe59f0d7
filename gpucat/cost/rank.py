"""The cost of a whole fine-tuning job on every configuration it fits, cheapest job first.

`gpucat.fit` finds the configurations with enough memory; for each, the time model gives the
throughput, and `jobcost.job_cost` prices the job with the provider's terms (billing increment,
storage that survives a stop, egress tiers) and, on spot, the interruption risk.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import duckdb

from gpucat.cost.jobcost import JobSpec, PricedOffer, job_cost, tiers_from_rows
from gpucat.cost.sizes import BYTES_PER_TOKEN_OF_TEXT, CHECKPOINTS_KEPT, JobSizes, job_sizes
from gpucat.cost.terms import Terms, hardware_for_row, load_terms, offer_egress, offer_storage, spot_defaults, spot_risk
from gpucat.cost.throughput import DEFAULT_FABRIC_GBITPS, PCIE_GBPS, Factors, flops_per_token, load_factors, model_shape, throughput
from gpucat.fit import FitOptions, fit
from gpucat.memory import ModelArch, TrainSettings
from gpucat.schemas.errors import UserInputError
from gpucat.warehouse.db import query_sql


@dataclass(frozen=True)
class CostOptions:
    tokens: float  # training tokens in one epoch
    epochs: float = 1.0
    markets: tuple[str, ...] = ("on_demand",)
    checkpoint_every_h: float = 0.5
    retention_h: float = 7 * 24.0
    dataset_gb: float | None = None  # default: the tokens as text
    restart_h: float = 10 / 60
    checkpoint_write_gbps: float = 1.0
    providers: Sequence[str] = ()
    top: int = 20
    headroom: float = 0.1
    max_gpus: int = 64
    available_only: bool = False
    include_stale: bool = False  # keep offers of sources past their freshness budget
    eval_tokens: float = 0.0  # tokens evaluated over the whole job (forward only), 0: no evaluation
    load_gbps: float = 1.0  # GB/s the base weights are read at when the job starts (an assumption, printed)


@dataclass(frozen=True)
class CostRow:
    provider: str
    offer_id: str
    instance_type: str
    region: str
    gpu_model: str
    gpus: int
    nodes: int
    market: str
    usd_per_hour: float
    tokens_per_s: float
    hours: float
    compute_usd: float
    storage_usd: float | None  # None: no published price (left out of the total)
    egress_usd: float | None
    spot_overhead_usd: float
    total_usd: float
    availability: str
    unknown: tuple[str, ...]  # terms the provider does not publish; the total leaves them out
    interruption_basis: str | None  # spot rows: where the interruption rate comes from
    interruption_label: str | None
    expected_interruptions: float | None
    assumptions: tuple[str, ...] = ()  # what the time model assumed for this configuration
    tokens_per_s_per_gpu: float = 0.0
    utilization: float = 0.0  # share of the dense peak the compute part was estimated at
    hours_range: tuple[float, float] = (0.0, 0.0)  # likely range from the LOSO error band
    total_range: tuple[float, float] = (0.0, 0.0)
    near_tie: bool = False  # its total range overlaps another shown row's: the order between them is not known
    fixed_hours: float = 0.0  # model load, checkpoint saves and evaluation, included in hours
    lines: tuple[str, ...] = field(default=(), repr=False)

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("lines", "interruption_label")}
        for key in ("hours", "compute_usd", "storage_usd", "egress_usd", "spot_overhead_usd", "total_usd", "tokens_per_s",
                    "tokens_per_s_per_gpu", "utilization", "fixed_hours"):
            out[key] = None if out[key] is None else round(out[key], 4)
        out["hours_range"] = [round(v, 4) for v in self.hours_range]
        out["total_range"] = [round(v, 4) for v in self.total_range]
        out["unknown"] = list(self.unknown)
        out["assumptions"] = list(self.assumptions)
        return out


@dataclass(frozen=True)
class CostResult:
    rows: list[CostRow]
    sizes: JobSizes
    training_tokens: float
    defaults: list[str]  # every assumed value, printed with the result
    skipped: dict[str, list[str]]  # reason -> providers or GPU models left out
    # Sources past their freshness budget: their offers are left out unless include_stale.
    stale_sources: list[dict[str, Any]] = field(default_factory=list)
    offers_in: int = 0  # configurations that fit in memory
    costed: int = 0  # of them, priced (before --top)
    not_costable: list[dict[str, str]] = field(default_factory=list)  # each offer left out, with the missing figure


def validate(options: CostOptions) -> None:
    if options.tokens <= 0:
        raise UserInputError(f"--tokens must be positive, got {options.tokens:g}")
    if options.epochs <= 0:
        raise UserInputError(f"--epochs must be positive, got {options.epochs:g}")
    if options.checkpoint_every_h <= 0:
        raise UserInputError("--checkpoint-every must be positive")
    if options.retention_h < 0:
        raise UserInputError("--retention must be zero or more")
    if options.dataset_gb is not None and options.dataset_gb < 0:
        raise UserInputError(f"--dataset-gb must be zero or more, got {options.dataset_gb:g}")
    if options.top < 1:
        raise UserInputError(f"--top must be at least 1, got {options.top}")


def job_costs(con: duckdb.DuckDBPyConnection, arch: ModelArch, settings: TrainSettings, options: CostOptions) -> CostResult:
    validate(options)
    terms = load_terms(con)
    providers = [p.lower() for p in options.providers]
    for provider in providers:
        if not terms.has_terms(provider):
            raise UserInputError(
                f"provider {provider!r} has no published billing, storage or egress terms in the catalog, so no job cost"
            )
    market = options.markets[0] if len(options.markets) == 1 else None
    fit_options = FitOptions(
        headroom=options.headroom, max_gpus=options.max_gpus, market=market, providers=providers,
        available_only=options.available_only, include_stale=options.include_stale, limit=1_000_000,
    )  # fmt: skip
    fitted = fit(con, arch, settings, fit_options)
    candidates = fitted.rows
    training_tokens = options.tokens * options.epochs
    factors = load_factors()
    skipped: dict[str, set[str]] = defaultdict(set)
    rows: list[CostRow] = []
    not_costable: list[dict[str, str]] = []
    for row in candidates:
        reason = _unusable(row, settings, terms)
        if reason is None:
            priced = _price(row, arch, settings, options, terms, factors)
            if priced is not None:
                rows.append(priced)
                continue
            reason = f"no {settings.precision} TFLOPS figure"
        skipped[reason].add(row["provider"] if reason == "no published terms" else row["gpu_model"])
        not_costable.append({"provider": row["provider"], "offer_id": row["offer_id"], "gpu_model": row["gpu_model"], "missing": reason})
    rows.sort(key=lambda r: (r.total_usd, r.hours, r.provider, r.offer_id))
    shown = mark_near_ties(rows[: options.top])
    sizes = job_sizes(model_shape(arch, settings), settings, options.tokens, options.dataset_gb)
    assumptions = dict.fromkeys(a for r in shown for a in r.assumptions)
    return CostResult(
        rows=shown,
        sizes=sizes,
        training_tokens=training_tokens,
        defaults=defaults(options, sizes) + list(assumptions),
        skipped={reason: sorted(names) for reason, names in skipped.items()},
        stale_sources=fitted.stale_sources,
        offers_in=len(candidates),
        costed=len(rows),
        not_costable=not_costable,
    )


def mark_near_ties(rows: list[CostRow]) -> list[CostRow]:
    """Flag each row whose likely total range overlaps another row's: their order is within the error."""
    out = []
    for i, row in enumerate(rows):
        low, high = row.total_range
        tie = any(j != i and other.total_range[0] <= high and low <= other.total_range[1] for j, other in enumerate(rows))
        out.append(replace(row, near_tie=tie))
    return out


def fixed_overheads_h(sizes: JobSizes, options: CostOptions, train_h: float, eval_s_per_token: float, spot: bool) -> dict[str, float]:
    """Wall-clock the job spends outside training steps: reading the base weights once, writing a
    checkpoint every interval (spot rows count their writes with the interruption arithmetic), and
    the evaluation the user asks for."""
    parts = {"model load": sizes.base_weights_gb / options.load_gbps / 3600}
    if not spot:
        saves = math.floor(train_h / options.checkpoint_every_h)
        parts["checkpoint saves"] = saves * sizes.checkpoint_gb / options.checkpoint_write_gbps / 3600
    if options.eval_tokens:
        parts["evaluation"] = options.eval_tokens * eval_s_per_token / 3600
    return parts


def _unusable(row: dict[str, Any], settings: TrainSettings, terms: Terms) -> str | None:
    """Why a configuration that fits in memory cannot be priced or run as asked, if it cannot."""
    if not terms.has_terms(row["provider"]):
        return "no published terms"
    if settings.precision.startswith("bf16") and not row["gpu_bf16"]:
        return "no bf16: try --precision fp16-mixed"
    if settings.method == "qlora" and not row["gpu_bnb_4bit"]:
        return "no bitsandbytes 4-bit kernels"
    return None


def _price(
    row: dict[str, Any], arch: ModelArch, settings: TrainSettings, options: CostOptions, terms: Terms, factors: Factors
) -> CostRow | None:
    """One configuration's job cost; None when its GPU has no TFLOPS figure."""
    provider, offer_id = row["provider"], row["offer_id"]
    gpu = terms.gpus.get(row["gpu_model"])
    fabric = terms.fabric_gbps.get((provider, offer_id), terms.fabric_gbps_per_node.get(provider))
    hw = hardware_for_row(row, gpu, settings.precision, fabric) if gpu else None
    if hw is None:
        return None
    run_settings = replace(settings, gpus=hw.gpus)
    shape = model_shape(arch, run_settings)
    tp = throughput(shape, run_settings, hw, factors)
    sizes = job_sizes(shape, settings, options.tokens, options.dataset_gb)
    training_tokens = options.tokens * options.epochs
    train_h = training_tokens / tp.tokens_per_s / 3600
    flops = flops_per_token(shape, run_settings)
    eval_s_per_token = flops["forward"] / sum(flops.values()) / tp.tokens_per_s  # forward only, same rate
    fixed = fixed_overheads_h(sizes, options, train_h, eval_s_per_token, row["market"] == "spot")
    job = JobSpec(
        hours=train_h + sum(fixed.values()), storage_gb=sizes.storage_gb, checkpoint_gb=sizes.checkpoint_gb,
        egress_gb=sizes.result_gb, retention_h=options.retention_h, checkpoint_every_h=options.checkpoint_every_h,
        restart_h=options.restart_h, checkpoint_write_gbps=options.checkpoint_write_gbps,
    )  # fmt: skip
    risk = spot_risk(row, terms) if row["market"] == "spot" else None
    # The throughput's likely range (measured/estimated, LOSO) scales the training hours and the time-billed parts.
    # A host's own storage and bandwidth prices (marketplaces) come before the provider's terms.
    egress = offer_egress(row) or (tiers_from_rows(terms.egress[provider]) if provider in terms.egress else None)
    storage = offer_storage(row) or terms.storage.get(provider, [])
    offer = PricedOffer(float(row["usd_per_hour_total"]), int(row["nodes"]), row["market"])
    cost = job_cost(job, offer, terms.billing.get(provider), storage, egress, risk)
    low, high = factors.error_band
    time_scale = (1 / high, 1 / low)  # hours scale as the inverse of throughput
    hours_range = tuple(cost.hours - train_h + train_h * k for k in time_scale)
    total_range = tuple(cost.total_usd + (cost.compute_usd + cost.spot_overhead_usd) * (k - 1) * train_h / cost.hours for k in time_scale)
    head = (
        f"{provider} {offer_id}: {hw.gpus} x {hw.gpu_model} ({row['nodes']} node(s), {row['market']})",
        f"throughput: {tp.tokens_per_s:,.0f} tokens/s ({tp.flops_per_token / 1e9:.1f} GFLOP/token, utilization "
        f"{tp.utilization:.2f} of {hw.peak_tflops:g} TFLOPS, scaling efficiency {tp.scaling_efficiency:.2f})",
        f"time: {training_tokens:,.0f} tokens / {tp.tokens_per_s:,.0f} tokens/s = {train_h:.3f} h"
        + "".join(f" + {name} {h:.3f} h" for name, h in fixed.items()) + f" = {job.hours:.3f} h",
        *(f"  assumed: {a}" for a in tp.assumptions),
    )
    cost_row = CostRow(
        provider=provider, offer_id=offer_id, instance_type=row["instance_type"], region=row["region"],
        gpu_model=row["gpu_model"], gpus=hw.gpus, nodes=int(row["nodes"]), market=row["market"],
        usd_per_hour=offer.usd_per_hour, tokens_per_s=tp.tokens_per_s, hours=cost.hours, compute_usd=cost.compute_usd,
        storage_usd=cost.storage_usd, egress_usd=cost.egress_usd, spot_overhead_usd=cost.spot_overhead_usd,
        total_usd=cost.total_usd, availability=row["availability"], unknown=cost.unknown,
        interruption_basis=risk.basis if risk else None, interruption_label=risk.label if risk else None,
        expected_interruptions=cost.expected_interruptions if risk else None, assumptions=tp.assumptions,
        tokens_per_s_per_gpu=tp.tokens_per_s_per_gpu, utilization=tp.utilization, fixed_hours=sum(fixed.values()),
        hours_range=hours_range, total_range=total_range,
        lines=head + cost.lines + (f"likely range (LOSO error band x{low:.2f}..x{high:.2f} on throughput): "
                                   f"{hours_range[0]:.2f}-{hours_range[1]:.2f} h, ${total_range[0]:.2f}-${total_range[1]:.2f}",),
    )  # fmt: skip
    return cost_row


def defaults(options: CostOptions, sizes: JobSizes) -> list[str]:
    dataset = (
        f"dataset {sizes.dataset_gb:.2f} GB (--dataset-gb)" if options.dataset_gb is not None
        else f"dataset {sizes.dataset_gb:.2f} GB: {BYTES_PER_TOKEN_OF_TEXT:g} bytes of text per token (set --dataset-gb)"
    )  # fmt: skip
    return [
        f"training tokens {options.tokens:,.0f} x {options.epochs:g} epoch(s)",
        dataset,
        f"stored: dataset + base weights {sizes.base_weights_gb:.2f} GB + {CHECKPOINTS_KEPT} checkpoints of {sizes.checkpoint_gb:.3f} GB",
        f"downloaded at the end: {sizes.result_gb:.3f} GB of trained weights (bf16)",
        f"storage kept for the run + {options.retention_h:g} h retention (--retention), on the provider's cheapest storage that survives a stop",
        "egress: the provider's monthly free allowance is assumed unused by other traffic",
        "a term a provider does not publish is left out of its total and named (storage ?, egress ?)",
        f"spot: checkpoint every {options.checkpoint_every_h:g} h (--checkpoint-every), {options.restart_h * 60:g} min to restart,"
        f" checkpoints written at {options.checkpoint_write_gbps:g} GB/s",
        f"spot rates where none is published: {spot_defaults()['default']['basis']} ({spot_defaults()['default']['interruptions_per_hour']}/h)",
        f"links without a catalog figure: PCIe {PCIE_GBPS:g} GB/s, fabric {DEFAULT_FABRIC_GBITPS:g} Gbit/s per node",
        f"wall-clock adds reading the base weights at {options.load_gbps:g} GB/s, a checkpoint save every"
        f" {options.checkpoint_every_h:g} h and {options.eval_tokens:,.0f} evaluation tokens",
        "hours and totals are shown as a likely range: the time model's leave-one-source-out error band"
        " (bench/cost_calibration.py); rows whose ranges overlap are near-ties (~)",
    ]


def save_job_costs(
    con: duckdb.DuckDBPyConnection, arch: ModelArch, settings: TrainSettings, options: CostOptions, result: CostResult
) -> int:
    """Append the answer to job_costs, so `SELECT * FROM latest_job_costs` shows the same numbers."""
    run_at = datetime.now(UTC)
    recorded = json.dumps({"settings": asdict(settings), "job": {**asdict(options), "providers": list(options.providers)}}, default=str)
    sql = query_sql("cost_save")
    con.begin()
    try:
        for rank, row in enumerate(result.rows, start=1):
            new = ("tokens_per_s_per_gpu", "utilization", "hours_range", "total_range", "near_tie", "fixed_hours")
            values = {k: v for k, v in row.__dict__.items() if k not in ("lines", "interruption_label", "assumptions", *new)}
            values["unknown"] = list(row.unknown)
            con.execute(sql, {**values, "run_at": run_at, "model": arch.name, "method": settings.method,
                              "training_tokens": result.training_tokens, "rank": rank, "options": recorded})  # fmt: skip
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return len(result.rows)
