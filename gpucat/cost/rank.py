"""The cost of a whole fine-tuning job on every configuration it fits, cheapest job first.

`gpucat.fit` finds the configurations with enough memory; for each, the time model gives the
throughput, and `jobcost.job_cost` prices the job with the provider's terms (billing increment,
storage that survives a stop, egress tiers) and, on spot, the interruption risk.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import duckdb

from gpucat.cost.jobcost import JobSpec, Offer, job_cost, tiers_from_rows
from gpucat.cost.sizes import BYTES_PER_TOKEN_OF_TEXT, CHECKPOINTS_KEPT, JobSizes, job_sizes
from gpucat.cost.terms import Terms, hardware_for_row, load_terms, offer_egress, offer_storage, spot_defaults, spot_risk
from gpucat.cost.throughput import DEFAULT_FABRIC_GBITPS, PCIE_GBPS, Factors, load_factors, model_shape, throughput
from gpucat.fit import FitOptions, fit
from gpucat.memory import ModelArch, TrainSettings
from schemas.errors import UserInputError
from warehouse.db import query_sql


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
    lines: tuple[str, ...] = field(default=(), repr=False)

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("lines", "interruption_label")}
        for key in ("hours", "compute_usd", "storage_usd", "egress_usd", "spot_overhead_usd", "total_usd", "tokens_per_s"):
            out[key] = None if out[key] is None else round(out[key], 4)
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
    for row in candidates:
        reason = _unusable(row, settings, terms)
        if reason:
            skipped[reason].add(row["provider"] if reason == "no published terms" else row["gpu_model"])
            continue
        priced = _price(row, arch, settings, options, terms, factors)
        if priced is None:
            skipped[f"no {settings.precision} TFLOPS figure"].add(row["gpu_model"])
            continue
        rows.append(priced)
    rows.sort(key=lambda r: (r.total_usd, r.hours, r.provider, r.offer_id))
    shown = rows[: options.top]
    sizes = job_sizes(model_shape(arch, settings), settings, options.tokens, options.dataset_gb)
    assumptions = dict.fromkeys(a for r in shown for a in r.assumptions)
    return CostResult(
        rows=shown,
        sizes=sizes,
        training_tokens=training_tokens,
        defaults=defaults(options, sizes) + list(assumptions),
        skipped={reason: sorted(names) for reason, names in skipped.items()},
        stale_sources=fitted.stale_sources,
    )


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
    job = JobSpec(
        hours=training_tokens / tp.tokens_per_s / 3600, storage_gb=sizes.storage_gb, checkpoint_gb=sizes.checkpoint_gb,
        egress_gb=sizes.result_gb, retention_h=options.retention_h, checkpoint_every_h=options.checkpoint_every_h,
        restart_h=options.restart_h, checkpoint_write_gbps=options.checkpoint_write_gbps,
    )  # fmt: skip
    risk = spot_risk(row, terms) if row["market"] == "spot" else None
    # A host's own storage and bandwidth prices (marketplaces) come before the provider's terms.
    egress = offer_egress(row) or (tiers_from_rows(terms.egress[provider]) if provider in terms.egress else None)
    storage = offer_storage(row) or terms.storage.get(provider, [])
    offer = Offer(float(row["usd_per_hour_total"]), int(row["nodes"]), row["market"])
    cost = job_cost(job, offer, terms.billing.get(provider), storage, egress, risk)
    head = (
        f"{provider} {offer_id}: {hw.gpus} x {hw.gpu_model} ({row['nodes']} node(s), {row['market']})",
        f"throughput: {tp.tokens_per_s:,.0f} tokens/s ({tp.flops_per_token / 1e9:.1f} GFLOP/token, utilization "
        f"{tp.utilization:.2f} of {hw.peak_tflops:g} TFLOPS, scaling efficiency {tp.scaling_efficiency:.2f})",
        f"time: {training_tokens:,.0f} tokens / {tp.tokens_per_s:,.0f} tokens/s = {job.hours:.3f} h",
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
        lines=head + cost.lines,
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
            values = {k: v for k, v in row.__dict__.items() if k not in ("lines", "interruption_label", "assumptions")}
            values["unknown"] = list(row.unknown)
            con.execute(sql, {**values, "run_at": run_at, "model": arch.name, "method": settings.method,
                              "training_tokens": result.training_tokens, "rank": rank, "options": recorded})  # fmt: skip
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return len(result.rows)
