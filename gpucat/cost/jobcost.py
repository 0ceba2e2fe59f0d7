"""What one fine-tuning job costs on one configuration: compute, storage, egress and spot risk.

Pure arithmetic over the job, the offer and the provider's published terms. Every input that is
an assumption rather than a published term is a field of `JobSpec` or `SpotRisk` with a default,
and `Assumptions` lists them so the CLI prints them with every answer.

- compute: run time rounded up to the billing increment (at least the minimum charge) x the
  hourly price of the whole configuration;
- storage: dataset + checkpoints, on the provider's cheapest storage that survives a stop, for
  the run time plus the retention;
- egress: the final weights (or adapter) downloaded once, through the egress tiers after the
  monthly free allowance;
- spot: expected interruptions x (half a checkpoint interval + restart time) of extra billed
  time, plus the time spent writing checkpoints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

HOURS_PER_MONTH = 730.0  # how providers turn a $/GB-month rate into hours (AWS, Azure: 730)


@dataclass(frozen=True)
class BillingTerms:
    billing_increment_s: float  # time is billed in whole increments
    min_charge_s: float = 0.0  # each session is billed at least this long


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
class Offer:
    usd_per_hour: float  # the whole configuration (every node)
    nodes: int
    market: str  # "on_demand" or "spot"


@dataclass(frozen=True)
class JobCost:
    hours: float  # run time including spot losses and checkpoint writes
    billed_hours: float
    compute_usd: float
    storage_usd: float
    egress_usd: float
    spot_overhead_usd: float
    total_usd: float
    expected_interruptions: float
    lines: tuple[str, ...] = field(default=())  # the arithmetic, one step a line


def billed_seconds(seconds: float, terms: BillingTerms) -> float:
    """`seconds` rounded up to whole billing increments, and at least the minimum charge."""
    increment = terms.billing_increment_s or 1.0
    return max(terms.min_charge_s, math.ceil(seconds / increment - 1e-9) * increment)


def egress_usd(gb: float, terms: EgressTerms) -> tuple[float, list[str]]:
    """Price `gb` through the tiers after the monthly free allowance (assumed unused by other traffic)."""
    billable = max(0.0, gb - terms.free_allowance_gb_month)
    lines = [f"egress: {gb:.2f} GB - {terms.free_allowance_gb_month:g} GB free allowance = {billable:.2f} GB billable"]
    total = 0.0
    for tier in sorted(terms.tiers, key=lambda t: t.from_gb):
        upper = math.inf if tier.to_gb is None else tier.to_gb
        in_tier = max(0.0, min(billable, upper) - tier.from_gb)
        if in_tier > 0:
            total += in_tier * tier.usd_per_gb
            lines.append(f"  {in_tier:.2f} GB in tier {tier.from_gb:g}-{'' if tier.to_gb is None else f'{tier.to_gb:g}'} GB x ${tier.usd_per_gb:g}/GB = ${in_tier * tier.usd_per_gb:.4f}")
    return total, lines


def job_cost(
    job: JobSpec,
    offer: Offer,
    billing: BillingTerms,
    storage_usd_per_gb_month: float,
    egress: EgressTerms,
    spot: SpotRisk | None = None,
) -> JobCost:
    lines = [f"run time at the estimated throughput: {job.hours:.3f} h"]
    hours = job.hours
    extra_h = 0.0
    interruptions = 0.0
    if offer.market == "spot":
        if spot is None:
            raise ValueError("a spot offer needs an interruption rate")
        writes = hours / job.checkpoint_every_h
        write_h = writes * job.checkpoint_gb / job.checkpoint_write_gbps / 3600
        lost_per = job.checkpoint_every_h / 2 + job.restart_h
        rate = spot.interruptions_per_hour * offer.nodes  # any node lost stops the job
        exposure = rate * lost_per
        if exposure >= 1:
            raise ValueError("interruptions come faster than the job can recover; checkpoint more often")
        # Lost time is itself exposed to interruptions: H = (base + writes) / (1 - rate * lost_per).
        total_h = (hours + write_h) / (1 - exposure)
        interruptions = rate * total_h
        extra_h = total_h - hours
        lines += [
            f"spot: {spot.interruptions_per_hour:.5f} interruptions/h per instance x {offer.nodes} instance(s) ({spot.basis})",
            f"  checkpoint writes: {writes:.1f} x {job.checkpoint_gb:.2f} GB / {job.checkpoint_write_gbps:g} GB/s = {write_h:.4f} h",
            f"  each interruption loses {job.checkpoint_every_h:.2f}/2 h of work + {job.restart_h:.2f} h restart = {lost_per:.3f} h",
            f"  run time ({hours:.3f} + {write_h:.4f}) / (1 - {rate:.5f} x {lost_per:.3f}) = {total_h:.3f} h; expected interruptions {interruptions:.3f}",
        ]
    base_s = billed_seconds(hours * 3600, billing)
    total_s = billed_seconds((hours + extra_h) * 3600, billing)
    compute = base_s / 3600 * offer.usd_per_hour
    spot_overhead = (total_s - base_s) / 3600 * offer.usd_per_hour
    lines.append(
        f"compute: {hours * 3600:.0f} s billed as {base_s:.0f} s (increment {billing.billing_increment_s:g} s, minimum {billing.min_charge_s:g} s)"
        f" x ${offer.usd_per_hour:.4f}/h = ${compute:.2f}"
    )
    if offer.market == "spot":
        lines.append(f"spot overhead: {total_s - base_s:.0f} more billed s x ${offer.usd_per_hour:.4f}/h = ${spot_overhead:.2f}")
    kept_h = hours + extra_h + job.retention_h
    storage = job.storage_gb * storage_usd_per_gb_month * kept_h / HOURS_PER_MONTH
    lines.append(
        f"storage: {job.storage_gb:.2f} GB x ${storage_usd_per_gb_month:g}/GB-month x ({hours + extra_h:.2f} h run + {job.retention_h:g} h retention)"
        f" / {HOURS_PER_MONTH:g} h = ${storage:.2f}"
    )
    egress_total, egress_lines = egress_usd(job.egress_gb, egress)
    lines += egress_lines
    lines.append(f"  egress total: ${egress_total:.2f}")
    total = compute + storage + egress_total + spot_overhead
    lines.append(f"total: ${compute:.2f} + ${storage:.2f} + ${egress_total:.2f} + ${spot_overhead:.2f} = ${total:.2f}")
    return JobCost(
        hours=hours + extra_h,
        billed_hours=total_s / 3600,
        compute_usd=compute,
        storage_usd=storage,
        egress_usd=egress_total,
        spot_overhead_usd=spot_overhead,
        total_usd=total,
        expected_interruptions=interruptions,
        lines=tuple(lines),
    )


def interruptions_per_hour_from_band(lower_pct: float, upper_pct: float) -> float:
    """AWS Spot Advisor bands give the share of instances interrupted over a month: take the
    band's midpoint. The open top band ">20%" is stored as 20-100; it counts as 20-30%."""
    upper = lower_pct + 10 if upper_pct >= 100 else upper_pct
    return (lower_pct + upper) / 2 / 100 / HOURS_PER_MONTH


def tiers_from_rows(rows: Sequence[dict]) -> EgressTerms:
    tiers = tuple(EgressTier(float(r["from_gb"]), None if r["to_gb"] is None else float(r["to_gb"]), float(r["usd_per_gb"])) for r in rows)
    allowance = max((float(r.get("free_allowance_gb_month") or 0) for r in rows), default=0.0)
    return EgressTerms(tiers=tiers, free_allowance_gb_month=allowance)
