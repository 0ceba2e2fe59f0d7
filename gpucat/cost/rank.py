"""The cost of a whole fine-tuning job on every configuration it fits, cheapest job first.

In set form, whatever the size of the market: one query (cost_candidates.sql) finds every offer
with enough memory at its smallest GPU count (`gpucat.fit`'s rule), the time model runs once per
distinct hardware, and cost_rank.sql prices and ranks every offer at once with `jobcost.job_cost`'s
arithmetic (billing increment, storage that survives a stop, egress tiers, spot interruptions).
Only the rows shown are priced again by `job_cost`, whose typed breakdown `gpucat.cost.explain`
renders. The same pass counts what each filter leaves, so an empty answer is explained without
asking again (`CostResult.candidates`).
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

from gpucat.cost.explain import defaults, row_lines
from gpucat.cost.jobcost import JobCost, JobSpec, PricedOffer, egress_charge, job_cost, tiers_from_rows
from gpucat.cost.sizes import JobSizes, job_sizes
from gpucat.cost.terms import Terms, default_spot_risk, hardware_for_row, load_terms, offer_egress, offer_storage, spot_risk
from gpucat.cost.throughput import Factors, Hardware, Throughput, flops_per_token, load_factors, model_shape, throughput
from gpucat.fit import gpu_counts, thresholds
from gpucat.freshness import stale_sources
from gpucat.memory import ModelArch, TrainSettings, per_gpu_need
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
class Breakdown:
    """Everything one row's explanation shows: the hardware, its throughput and time, the money."""

    hardware: Hardware
    throughput: Throughput
    training_tokens: float
    train_h: float
    fixed_h: dict[str, float]  # model load, checkpoint saves, evaluation
    job_cost: JobCost
    error_band: tuple[float, float]  # the time model's LOSO band on throughput


@dataclass(frozen=True)
class CandidateCount:
    """How many fitting offers share one combination of the filters' columns (cost_counts.sql)."""

    provider: str
    market: str
    unavailable: bool
    is_stale: bool
    unpriced: bool  # no terms, no bf16/4-bit kernels, or no TFLOPS figure
    offers: int


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
    breakdown: Breakdown | None = field(default=None, repr=False, compare=False)  # what --explain renders

    @property
    def lines(self) -> tuple[str, ...]:
        """The arithmetic of this row, one step a line (`gpucat.cost.explain.row_lines`)."""
        return row_lines(self)

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("breakdown", "interruption_label")}
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
    counts: list[CandidateCount] = field(default_factory=list, repr=False)  # every fitting offer, by filter columns

    def candidates(self, options: CostOptions, *, priced_only: bool = False) -> int:
        """Fitting offers that `options`' filters keep (only those that can be priced with `priced_only`),
        counted from this answer's one pass: what `job_costs` with those filters would have seen."""
        providers = [p.lower() for p in options.providers]
        market = options.markets[0] if len(options.markets) == 1 else None
        return sum(
            c.offers for c in self.counts
            if (not providers or c.provider in providers) and (market is None or c.market == market)
            and not (options.available_only and c.unavailable) and (options.include_stale or not c.is_stale)
            and not (priced_only and c.unpriced)
        )  # fmt: skip


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
    """Every configuration the job fits on, priced and ranked in one pass over the catalog (cost_*.sql);
    only the rows shown are priced again here, with their breakdown, to be explained."""
    validate(options)
    if not 0 <= options.headroom < 1:
        raise UserInputError(f"--headroom must be a fraction in [0, 1), got {options.headroom}")
    terms = load_terms(con)
    providers = [p.lower() for p in options.providers]
    for provider in providers:
        if not terms.has_terms(provider):
            raise UserInputError(
                f"provider {provider!r} has no published billing, storage or egress terms in the catalog, so no job cost"
            )
    counts = gpu_counts(settings, options.max_gpus)
    estimates = per_gpu_need(arch, replace(settings, gpus=1), counts)
    needs = {"gpus": list(estimates), "per_gpu_gb": [thresholds(e)[0] for e in estimates.values()], "headroom": options.headroom}
    filters = {
        "providers": providers,
        "market": options.markets[0] if len(options.markets) == 1 else None,
        "available_only": options.available_only,
        "include_stale": options.include_stale,
    }
    factors = load_factors()
    con.execute("CREATE OR REPLACE TEMP TABLE cost_candidates AS " + query_sql("cost_candidates"), needs)
    try:
        timed: dict[int, HardwareTime] = {}
        unpriced: dict[int, str] = {}
        for key_row in _records(con, "cost_hardware", filters):
            reason = _unusable(key_row, settings, terms)
            hw = None if reason else _hardware(key_row, settings, terms)
            if hw is None:
                unpriced[key_row["key"]] = reason or f"no {settings.precision} TFLOPS figure"
            elif key_row["wanted"]:
                timed[key_row["key"]] = hardware_time(hw, arch, settings, options, factors, key_row["market"] == "spot",
                                                       key_row["provider"])
        ranked = _records(con, "cost_rank", {**filters, **_pricing_params(timed, terms, options), "limit": options.top + RESCORED})
        if ranked and ranked[0]["unrecoverable"]:
            raise ValueError("interruptions come faster than the job can recover; checkpoint more often")
        keys = [{"provider": r["provider"], "offer_id": r["offer_id"]} for r in ranked]
        rows = [_price(row, timed[row["key"]], options, terms, factors) for row in _records(con, "cost_rows", {"keys": keys})]
        left = _records(con, "cost_unpriced", {**filters, "unpriced": list(unpriced)})
        tally = [CandidateCount(**r) for r in _records(con, "cost_counts", {"unpriced": list(unpriced)})]
    finally:
        con.execute("DROP TABLE IF EXISTS temp.cost_candidates")
    rows.sort(key=lambda r: (r.total_usd, r.hours, r.provider, r.offer_id))
    shown = mark_near_ties(rows[: options.top])
    skipped: dict[str, set[str]] = defaultdict(set)
    not_costable = []
    for row in left:
        reason = unpriced[row["key"]]
        skipped[reason].add(row["provider"] if reason == "no published terms" else row["gpu_model"])
        not_costable.append({"provider": row["provider"], "offer_id": row["offer_id"], "gpu_model": row["gpu_model"], "missing": reason})
    sizes = job_sizes(model_shape(arch, settings), settings, options.tokens, options.dataset_gb)
    assumptions = dict.fromkeys(a for r in shown for a in r.assumptions)
    result = CostResult(
        rows=shown,
        sizes=sizes,
        training_tokens=options.tokens * options.epochs,
        defaults=defaults(options, sizes) + list(assumptions),
        skipped={reason: sorted(names) for reason, names in skipped.items()},
        stale_sources=stale_sources(con),
        counts=tally,
    )
    offers_in = result.candidates(options)
    return replace(result, offers_in=offers_in, costed=offers_in - len(not_costable), not_costable=not_costable)


# Rows past --top priced again in Python: the set form and the per-row arithmetic agree to the last
# bit (tests/cost/test_set_form.py), so these only guard the cut against a rounding difference.
RESCORED = 50


def _records(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cursor = con.execute(query_sql(name), params)
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, values, strict=True)) for values in cursor.fetchall()]


def _pricing_params(timed: dict[int, HardwareTime], terms: Terms, options: CostOptions) -> dict[str, Any]:
    """What cost_rank.sql prices with: the timed hardware, and the provider terms as small lists."""
    hardware = []
    for key, t in timed.items():
        egress = tiers_from_rows(terms.egress[t.provider]) if t.provider in terms.egress else None
        charge = egress_charge(t.job.egress_gb, egress) if egress is not None else None
        hardware.append({"key": key, "reason": None, "hours": t.job.hours, "storage_gb": t.job.storage_gb,
                         "checkpoint_gb": t.job.checkpoint_gb, "egress_gb": t.job.egress_gb,
                         "egress_usd": charge.usd if charge else None, "has_egress": charge is not None})  # fmt: skip
    providers = {t.provider for t in timed.values()}
    return {
        "hardware": hardware,
        "billing": [{"provider": p, "increment_s": b.billing_increment_s, "min_charge_s": b.min_charge_s}
                    for p, b in terms.billing.items() if b is not None],  # fmt: skip
        "storage": [{"provider": p, "run": s.usd_per_gb_month, "kept": s.usd_per_gb_month_kept}
                    for p, products in terms.storage.items() for s in products],  # fmt: skip
        "spot_default": [{"provider": p, "rate": default_spot_risk(p).interruptions_per_hour} for p in sorted(providers)],
        "checkpoint_every_h": options.checkpoint_every_h,
        "checkpoint_write_gbps": options.checkpoint_write_gbps,
        "restart_h": options.restart_h,
        "retention_h": options.retention_h,
    }


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


def _hardware(row: dict[str, Any], settings: TrainSettings, terms: Terms) -> Hardware | None:
    """The time model's view of a configuration; None when its GPU has no TFLOPS figure."""
    gpu = terms.gpus.get(row["gpu_model"])
    fabric = row["fabric_gbps"] if row["fabric_gbps"] is not None else terms.fabric_gbps_per_node.get(row["provider"])
    return hardware_for_row(row, gpu, settings.precision, fabric) if gpu else None


@dataclass(frozen=True)
class HardwareTime:
    """How long the job runs on one hardware: the same for every offer of it."""

    provider: str
    hardware: Hardware
    throughput: Throughput
    train_h: float
    fixed_h: dict[str, float]
    job: JobSpec


def hardware_time(hw: Hardware, arch: ModelArch, settings: TrainSettings, options: CostOptions, factors: Factors,
                  spot: bool, provider: str = "") -> HardwareTime:  # fmt: skip
    run_settings = replace(settings, gpus=hw.gpus)
    shape = model_shape(arch, run_settings)
    tp = throughput(shape, run_settings, hw, factors)
    sizes = job_sizes(shape, settings, options.tokens, options.dataset_gb)
    train_h = options.tokens * options.epochs / tp.tokens_per_s / 3600
    flops = flops_per_token(shape, run_settings)
    eval_s_per_token = flops["forward"] / sum(flops.values()) / tp.tokens_per_s  # forward only, same rate
    fixed = fixed_overheads_h(sizes, options, train_h, eval_s_per_token, spot)
    job = JobSpec(
        hours=train_h + sum(fixed.values()), storage_gb=sizes.storage_gb, checkpoint_gb=sizes.checkpoint_gb,
        egress_gb=sizes.result_gb, retention_h=options.retention_h, checkpoint_every_h=options.checkpoint_every_h,
        restart_h=options.restart_h, checkpoint_write_gbps=options.checkpoint_write_gbps,
    )  # fmt: skip
    return HardwareTime(provider, hw, tp, train_h, fixed, job)


def _price(row: dict[str, Any], timed: HardwareTime, options: CostOptions, terms: Terms, factors: Factors) -> CostRow:
    """One configuration's job cost, with the breakdown its explanation is rendered from."""
    provider, offer_id = row["provider"], row["offer_id"]
    hw, tp, train_h = timed.hardware, timed.throughput, timed.train_h
    risk = spot_risk(row, terms) if row["market"] == "spot" else None
    # A host's own storage and bandwidth prices (marketplaces) come before the provider's terms.
    egress = offer_egress(row) or (tiers_from_rows(terms.egress[provider]) if provider in terms.egress else None)
    storage = offer_storage(row) or terms.storage.get(provider, [])
    offer = PricedOffer(float(row["usd_per_hour_total"]), int(row["nodes"]), row["market"])
    cost = job_cost(timed.job, offer, terms.billing.get(provider), storage, egress, risk)
    # The throughput's likely range (measured/estimated, LOSO) scales the training hours and the time-billed parts.
    low, high = factors.error_band
    time_scale = (1 / high, 1 / low)  # hours scale as the inverse of throughput
    hours_range = tuple(cost.hours - train_h + train_h * k for k in time_scale)
    total_range = tuple(cost.total_usd + (cost.compute_usd + cost.spot_overhead_usd) * (k - 1) * train_h / cost.hours for k in time_scale)
    breakdown = Breakdown(hw, tp, options.tokens * options.epochs, train_h, timed.fixed_h, cost, factors.error_band)
    return CostRow(
        provider=provider, offer_id=offer_id, instance_type=row["instance_type"], region=row["region"],
        gpu_model=row["gpu_model"], gpus=hw.gpus, nodes=int(row["nodes"]), market=row["market"],
        usd_per_hour=offer.usd_per_hour, tokens_per_s=tp.tokens_per_s, hours=cost.hours, compute_usd=cost.compute_usd,
        storage_usd=cost.storage_usd, egress_usd=cost.egress_usd, spot_overhead_usd=cost.spot_overhead_usd,
        total_usd=cost.total_usd, availability=row["availability"], unknown=cost.unknown,
        interruption_basis=risk.basis if risk else None, interruption_label=risk.label if risk else None,
        expected_interruptions=cost.expected_interruptions if risk else None, assumptions=tp.assumptions,
        tokens_per_s_per_gpu=tp.tokens_per_s_per_gpu, utilization=tp.utilization, fixed_hours=sum(timed.fixed_h.values()),
        hours_range=hours_range, total_range=total_range, breakdown=breakdown,  # type: ignore[arg-type]
    )  # fmt: skip


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
            values = {k: v for k, v in row.__dict__.items() if k not in ("breakdown", "interruption_label", "assumptions", *new)}
            values["unknown"] = list(row.unknown)
            con.execute(sql, {**values, "run_at": run_at, "model": arch.name, "method": settings.method,
                              "training_tokens": result.training_tokens, "rank": rank, "options": recorded})  # fmt: skip
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return len(result.rows)
