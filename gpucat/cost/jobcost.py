"""What one fine-tuning job costs on one configuration: compute, storage, egress and spot risk.

Pure arithmetic over the job, the offer and the provider's published terms. Every input that is
an assumption rather than a published term is a field of `JobSpec` or `SpotRisk` with a default,
and `Assumptions` lists them so the CLI prints them with every answer.

- compute: run time rounded up to the billing increment (at least the minimum charge) x the
  hourly price of the whole configuration;
- storage: dataset + checkpoints, on the provider's cheapest storage that survives a stop, for
  the run time plus the retention;
- egress: the final weights (or adapter) downloaded once, through the egress tiers (whose $0
  first tier is the monthly free allowance);
- spot: expected interruptions x (half a checkpoint interval + restart time) of extra billed
  time, plus the time spent writing checkpoints and half a billing increment per restarted
  session. The spot notice is not counted on to save work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

HOURS_PER_MONTH = 730.0  # how providers turn a $/GB-month rate into hours (AWS, Azure: 730)


@dataclass(frozen=True)
class BillingTerms:
    billing_increment_s: float  # time is billed in whole increments
    min_charge_s: float = 0.0  # each session is billed at least this long


@dataclass(frozen=True)
class StorageTerms:
    """One storage product that survives a stop (or a terminate)."""

    product: str
    usd_per_gb_month: float  # while the instance runs
    usd_per_gb_month_kept: float  # after the run: the stopped rate where it differs, else the same

    def usd(self, gb: float, run_h: float, kept_h: float) -> float:
        return gb * (self.usd_per_gb_month * run_h + self.usd_per_gb_month_kept * kept_h) / HOURS_PER_MONTH


@dataclass(frozen=True)
class EgressTier:
    from_gb: float
    to_gb: float | None  # None: no upper bound
    usd_per_gb: float


@dataclass(frozen=True)
class EgressTerms:
    tiers: tuple[EgressTier, ...]
    free_allowance_gb_month: float = 0.0


@dataclass(frozen=True)
class SpotRisk:
    interruptions_per_hour: float  # per instance
    basis: str  # where the rate comes from, printed with the row
    label: str = ""  # the same in a few words, for a table cell


@dataclass(frozen=True)
class JobSpec:
    hours: float  # run time at the configuration's throughput, before any interruption
    storage_gb: float  # dataset + kept checkpoints
    checkpoint_gb: float
    egress_gb: float  # what is downloaded at the end
    retention_h: float = 7 * 24.0
    checkpoint_every_h: float = 0.5
    restart_h: float = 10 / 60  # relaunch, reload the checkpoint and warm up after an interruption
    checkpoint_write_gbps: float = 1.0  # GB/s to persistent storage while writing a checkpoint


@dataclass(frozen=True)
class PricedOffer:
    """An offer as the cost model prices it: the hourly price of the whole configuration, its nodes, its market."""

    usd_per_hour: float  # the whole configuration (every node)
    nodes: int
    market: str  # "on_demand" or "spot"


@dataclass(frozen=True)
class SpotLoss:
    """How interruptions stretch a spot run (the breakdown of `JobCost.hours` beyond the job's own)."""

    interruptions_per_hour: float  # per instance
    basis: str
    checkpoint_writes: float
    write_h: float  # time spent writing checkpoints
    lost_per_interruption_h: float  # half a checkpoint interval + the restart
    rate_per_hour: float  # interruptions per hour of the whole configuration (any node lost stops the job)
    total_h: float  # run time with the losses and the writes


@dataclass(frozen=True)
class EgressPart:
    tier: EgressTier
    gb: float
    usd: float


@dataclass(frozen=True)
class EgressCharge:
    """What downloading `gb` costs through one provider's tiers; `usd` None when they stop short of it."""

    gb: float
    free_allowance_gb: float
    parts: tuple[EgressPart, ...]
    covered_gb: float
    usd: float | None


@dataclass(frozen=True)
class JobCost:
    """The job's price on one offer, with every intermediate figure the explanation shows
    (`job_cost_lines` renders them; `lines` is that rendering)."""

    hours: float  # run time including spot losses and checkpoint writes
    billed_hours: float
    compute_usd: float
    storage_usd: float | None  # None: the provider publishes no price for storage that survives a stop
    egress_usd: float | None  # None: no published egress price for this volume
    spot_overhead_usd: float
    total_usd: float  # the known parts
    expected_interruptions: float
    unknown: tuple[str, ...] = ()  # terms the provider does not publish; the total leaves them out
    # The breakdown behind the figures above:
    job: JobSpec | None = None
    offer: PricedOffer | None = None
    billing: BillingTerms | None = None
    base_billed_s: float = 0.0  # the run without spot losses, rounded to the billing increment
    total_billed_s: float = 0.0  # with the losses and the restarted sessions' rounding
    restart_rounding_s: float = 0.0
    spot: SpotLoss | None = None
    storage: StorageTerms | None = None  # the cheapest product that survives a stop
    egress: EgressCharge | None = None

    @property
    def lines(self) -> tuple[str, ...]:
        """The arithmetic, one step a line (`job_cost_lines`)."""
        return job_cost_lines(self)


def billed_seconds(seconds: float, terms: BillingTerms) -> float:
    """`seconds` rounded up to whole billing increments, and at least the minimum charge."""
    increment = terms.billing_increment_s or 1.0
    return max(terms.min_charge_s, math.ceil(seconds / increment - 1e-9) * increment)


def egress_charge(gb: float, terms: EgressTerms) -> EgressCharge:
    """Price `gb` of one month's traffic through the tiers ([from_gb, to_gb) of the month's volume).
    The free allowance (assumed unused by other traffic) is the month's first GB, whether the
    provider lists it as a $0 first tier (Azure) or apart from tiers that start at 0 (AWS: 100 GB
    a month free, then "up to 10 TB" at the first rate). `usd` None when the tiers do not cover the volume."""
    free = terms.free_allowance_gb_month
    total = 0.0
    covered = 0.0
    parts = []
    for tier in sorted(terms.tiers, key=lambda t: t.from_gb):
        upper = math.inf if tier.to_gb is None else tier.to_gb
        in_tier = max(0.0, min(gb, upper) - max(tier.from_gb, free))
        covered = max(covered, min(gb, upper))
        if in_tier > 0:
            total += in_tier * tier.usd_per_gb
            parts.append(EgressPart(tier, in_tier, in_tier * tier.usd_per_gb))
    return EgressCharge(gb, free, tuple(parts), covered, None if covered < gb else total)


def egress_usd(gb: float, terms: EgressTerms) -> tuple[float | None, list[str]]:
    """`egress_charge`'s total, with its arithmetic as lines."""
    charge = egress_charge(gb, terms)
    return charge.usd, egress_lines(charge)


def spot_loss(job: JobSpec, nodes: int, spot: SpotRisk) -> SpotLoss:
    """Lost time is itself exposed to interruptions: H = (base + writes) / (1 - rate * lost_per)."""
    writes = job.hours / job.checkpoint_every_h
    write_h = writes * job.checkpoint_gb / job.checkpoint_write_gbps / 3600
    lost_per = job.checkpoint_every_h / 2 + job.restart_h
    rate = spot.interruptions_per_hour * nodes  # any node lost stops the job
    exposure = rate * lost_per
    if exposure >= 1:
        raise ValueError("interruptions come faster than the job can recover; checkpoint more often")
    total_h = (job.hours + write_h) / (1 - exposure)
    return SpotLoss(spot.interruptions_per_hour, spot.basis, writes, write_h, lost_per, rate, total_h)


def job_cost(
    job: JobSpec,
    offer: PricedOffer,
    billing: BillingTerms | None,
    storage: Sequence[StorageTerms],
    egress: EgressTerms | None,
    spot: SpotRisk | None = None,
) -> JobCost:
    """Price the job; a term the provider does not publish (None, or no storage) is left out
    of the total and named in `unknown` rather than guessed."""
    unknown: list[str] = []
    hours = job.hours
    extra_h = 0.0
    interruptions = 0.0
    loss = None
    if offer.market == "spot":
        if spot is None:
            raise ValueError("a spot offer needs an interruption rate")
        loss = spot_loss(job, offer.nodes, spot)
        interruptions = loss.rate_per_hour * loss.total_h
        extra_h = loss.total_h - hours
    if billing is None:
        unknown.append("billing increment")
    base_s = hours * 3600 if billing is None else billed_seconds(hours * 3600, billing)
    total_s = (hours + extra_h) * 3600 if billing is None else billed_seconds((hours + extra_h) * 3600, billing)
    restart_rounding_s = 0.0
    if billing is not None and interruptions > 0:
        # Each restart opens a new billed session: on average half an increment is lost to rounding.
        restart_rounding_s = interruptions * billing.billing_increment_s / 2
        total_s += restart_rounding_s
    compute = base_s / 3600 * offer.usd_per_hour
    spot_overhead = (total_s - base_s) / 3600 * offer.usd_per_hour
    run_h = hours + extra_h
    best = min(storage, key=lambda t: t.usd(job.storage_gb, run_h, job.retention_h)) if storage else None
    storage_total = best.usd(job.storage_gb, run_h, job.retention_h) if best else None
    if best is None:
        unknown.append("storage price")
    charge = egress_charge(job.egress_gb, egress) if egress is not None else None
    egress_total = charge.usd if charge else None
    if egress_total is None:
        unknown.append("egress price")
    total = sum(p for p in (compute, storage_total, egress_total, spot_overhead) if p is not None)
    return JobCost(
        hours=hours + extra_h,
        billed_hours=total_s / 3600,
        compute_usd=compute,
        storage_usd=storage_total,
        egress_usd=egress_total,
        spot_overhead_usd=spot_overhead,
        total_usd=total,
        expected_interruptions=interruptions,
        unknown=tuple(unknown),
        job=job,
        offer=offer,
        billing=billing,
        base_billed_s=base_s,
        total_billed_s=total_s,
        restart_rounding_s=restart_rounding_s,
        spot=loss,
        storage=best,
        egress=charge,
    )


def interruptions_per_hour_from_band(lower_pct: float, upper_pct: float) -> float:
    """AWS Spot Advisor bands give the share of instances interrupted over a month: take the
    band's midpoint. The open top band ">20%" is stored as 20-100; it counts as 20-30%."""
    upper = lower_pct + 10 if upper_pct >= 100 else upper_pct
    return (lower_pct + upper) / 2 / 100 / HOURS_PER_MONTH


def tiers_from_rows(rows: Sequence[dict]) -> EgressTerms:
    """egress_terms rows of one provider and scope (tier order) -> EgressTerms."""
    tiers = tuple(EgressTier(float(r["from_gb"]), None if r["to_gb"] is None else float(r["to_gb"]), float(r["usd_per_gb"])) for r in rows)
    allowance = max((float(r.get("free_allowance_gb_month") or 0) for r in rows), default=0.0)
    return EgressTerms(tiers=tiers, free_allowance_gb_month=allowance)


# --- the explanation: rendered from the breakdown above, after the arithmetic -------------------


def egress_lines(charge: EgressCharge) -> list[str]:
    free = charge.free_allowance_gb
    lines = [f"egress: {charge.gb:.2f} GB (monthly free allowance {free:g} GB, assumed unused)"]
    if free > 0:
        lines.append(f"  {min(charge.gb, free):.2f} GB within the free allowance = $0")
    for part in charge.parts:
        tier = part.tier
        span = f"{tier.from_gb:g} GB and up" if tier.to_gb is None else f"{tier.from_gb:g}-{tier.to_gb:g} GB"
        lines.append(f"  {part.gb:.2f} GB in tier {span} x ${tier.usd_per_gb:g}/GB = ${part.usd:.4f}")
    if charge.usd is None:
        lines.append(f"  no published price above {charge.covered_gb:g} GB")
    return lines


def job_cost_lines(cost: JobCost) -> tuple[str, ...]:
    """The arithmetic of one job cost, one step a line."""
    job, offer, billing = cost.job, cost.offer, cost.billing
    if job is None or offer is None:
        return ()
    hours = job.hours
    lines = [f"run time at the estimated throughput: {hours:.3f} h"]
    if (loss := cost.spot) is not None:
        lines += [
            f"spot: {loss.interruptions_per_hour:.5f} interruptions/h per instance x {offer.nodes} instance(s) ({loss.basis})",
            f"  checkpoint writes: {loss.checkpoint_writes:.1f} x {job.checkpoint_gb:.2f} GB / {job.checkpoint_write_gbps:g} GB/s"
            f" = {loss.write_h:.4f} h",
            f"  each interruption loses {job.checkpoint_every_h:.2f}/2 h of work + {job.restart_h:.2f} h restart"
            f" = {loss.lost_per_interruption_h:.3f} h",
            f"  run time ({hours:.3f} + {loss.write_h:.4f}) / (1 - {loss.rate_per_hour:.5f} x {loss.lost_per_interruption_h:.3f})"
            f" = {loss.total_h:.3f} h; expected interruptions {cost.expected_interruptions:.3f}",
        ]
    how = (
        f"increment {billing.billing_increment_s:g} s, minimum {billing.min_charge_s:g} s" if billing
        else "increment not published: billed exactly"
    )  # fmt: skip
    lines.append(f"compute: {hours * 3600:.0f} s billed as {cost.base_billed_s:.0f} s ({how}) x ${offer.usd_per_hour:.4f}/h"
                 f" = ${cost.compute_usd:.2f}")  # fmt: skip
    if offer.market == "spot":
        extra_s = cost.total_billed_s - cost.base_billed_s
        rounding = f" (of which {cost.restart_rounding_s:.0f} s rounding the restarted sessions)" if cost.restart_rounding_s else ""
        lines.append(f"spot overhead: {extra_s:.0f} more billed s{rounding} x ${offer.usd_per_hour:.4f}/h = ${cost.spot_overhead_usd:.2f}")
    if (best := cost.storage) is not None:
        lines.append(
            f"storage ({best.product}): {job.storage_gb:.2f} GB x (${best.usd_per_gb_month:g}/GB-month x {cost.hours:.2f} h run"
            f" + ${best.usd_per_gb_month_kept:g}/GB-month x {job.retention_h:g} h retention) / {HOURS_PER_MONTH:g} h"
            f" = ${cost.storage_usd:.2f}"
        )
    else:
        lines.append("storage: no published price for storage that survives a stop; left out of the total")
    if cost.egress is not None:
        lines += egress_lines(cost.egress)
    if cost.egress_usd is None:
        lines.append("egress: no published price for this volume; left out of the total")
    else:
        lines.append(f"  egress total: ${cost.egress_usd:.2f}")
    parts = [cost.compute_usd, cost.storage_usd, cost.egress_usd, cost.spot_overhead_usd]
    shown = " + ".join("?" if p is None else f"${p:.2f}" for p in parts)
    lines.append(f"total: {shown} = ${cost.total_usd:.2f}" + (f" (without {', '.join(cost.unknown)})" if cost.unknown else ""))
    return tuple(lines)
