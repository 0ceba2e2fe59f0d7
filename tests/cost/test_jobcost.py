"""The money arithmetic: billing increments, storage, egress tiers, spot risk, and rankings it changes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpucat.cost.jobcost import (
    BillingTerms,
    EgressTerms,
    EgressTier,
    JobSpec,
    PricedOffer,
    SpotRisk,
    StorageTerms,
    billed_seconds,
    egress_usd,
    interruptions_per_hour_from_band,
    job_cost,
)
from gpucat.cost.parse import duration_hours, token_count
from gpucat.schemas.errors import UserInputError

PER_SECOND = BillingTerms(billing_increment_s=1, min_charge_s=60)
HOURLY = BillingTerms(billing_increment_s=3600, min_charge_s=3600)
FREE_EGRESS = EgressTerms(tiers=(EgressTier(0, None, 0.0),))
# The shape of AWS's published tiers (schemas/reference/terms/egress_terms.csv): the free allowance is the $0 tier.
AWS_EGRESS = EgressTerms(
    tiers=(EgressTier(0, 100, 0.0), EgressTier(100, 10000, 0.09), EgressTier(10000, 50000, 0.085), EgressTier(50000, None, 0.07)),
    free_allowance_gb_month=100,
)
GP3 = [StorageTerms("block: EBS", 0.08, 0.08)]
JOB = JobSpec(hours=1.1, storage_gb=50, checkpoint_gb=20, egress_gb=16, retention_h=0)


@pytest.mark.parametrize(
    ("seconds", "terms", "billed"),
    [(30, PER_SECOND, 60), (61.2, PER_SECOND, 62), (3960, HOURLY, 7200), (3600, HOURLY, 3600), (10, HOURLY, 3600),
     (90, BillingTerms(60, 0), 120)],
)  # fmt: skip
def test_billed_time_rounds_up_to_the_increment_with_the_minimum(seconds, terms, billed):
    assert billed_seconds(seconds, terms) == billed


def test_egress_goes_through_the_tiers_after_the_free_allowance():
    usd, _ = egress_usd(12_000, AWS_EGRESS)
    assert usd == pytest.approx(9_900 * 0.09 + 2_000 * 0.085)
    assert egress_usd(80, AWS_EGRESS)[0] == 0
    assert egress_usd(500, EgressTerms((EgressTier(0, 100, 0.0),)))[0] is None  # no price above 100 GB


# The shape `aws-terms` loads from the AWS price list: tiers that start at 0 at the first rate, with
# the 100 GB monthly free allowance stated apart (reviewed egress_terms row).
AWS_PRICELIST_EGRESS = EgressTerms(
    tiers=(EgressTier(0, 10240, 0.09), EgressTier(10240, 51200, 0.085), EgressTier(51200, None, 0.07)),
    free_allowance_gb_month=100,
)


@pytest.mark.parametrize(("gb", "usd"), [(0.08, 0.0), (100, 0.0), (150, 50 * 0.09), (12_000, 10_140 * 0.09 + 1_760 * 0.085)])
def test_a_free_allowance_stated_apart_from_the_tiers_is_applied(gb, usd):
    charged, lines = egress_usd(gb, AWS_PRICELIST_EGRESS)
    assert charged == pytest.approx(usd)
    assert lines[1] == f"  {min(gb, 100):.2f} GB within the free allowance = $0"


def test_the_cheapest_storage_for_the_job_is_chosen():
    # A volume disk is cheaper while running but dearer while stopped; over a week's retention
    # the network volume wins (RunPod's published rates).
    volume = StorageTerms("volume", 0.10, 0.20)
    network = StorageTerms("network_volume", 0.07, 0.07)
    cost = job_cost(JobSpec(1.0, 100, 1, 0, retention_h=168),
                    PricedOffer(1.0, 1, "on_demand"), PER_SECOND, [volume, network], FREE_EGRESS)  # fmt: skip
    assert cost.storage_usd == pytest.approx(network.usd(100, 1.0, 168))
    assert any("network_volume" in line for line in cost.lines)


def test_unpublished_terms_are_left_out_and_named():
    cost = job_cost(JOB, PricedOffer(3.0, 1, "on_demand"), None, [], None)
    assert cost.storage_usd is None and cost.egress_usd is None
    assert cost.unknown == ("billing increment", "storage price", "egress price")
    assert cost.compute_usd == pytest.approx(1.1 * 3.0)  # billed exactly, no rounding assumed
    assert cost.total_usd == pytest.approx(cost.compute_usd)


@pytest.mark.parametrize("market", ["on_demand", "spot"])
def test_parts_add_up_to_the_total(market):
    spot = SpotRisk(0.1, "test rate") if market == "spot" else None
    cost = job_cost(JOB, PricedOffer(3.0, 1, market), PER_SECOND, GP3, AWS_EGRESS, spot)
    assert cost.total_usd == pytest.approx(cost.compute_usd + cost.storage_usd + cost.egress_usd + cost.spot_overhead_usd)
    assert cost.lines[-1].startswith("total: ")


def test_on_demand_has_no_spot_overhead_and_spot_shows_its_assumption():
    on_demand = job_cost(JOB, PricedOffer(3.0, 1, "on_demand"), PER_SECOND, GP3, FREE_EGRESS)
    assert on_demand.spot_overhead_usd == 0 and on_demand.expected_interruptions == 0
    assert not any(line.startswith("spot") for line in on_demand.lines)
    spot = job_cost(JOB, PricedOffer(3.0, 2, "spot"), PER_SECOND, GP3, FREE_EGRESS, SpotRisk(0.1, "assumed 0.1/h"))
    # two nodes: either one interrupted stops the job; lost work (15 min + 10 min) per interruption
    assert spot.expected_interruptions == pytest.approx(0.2 * spot.hours)
    assert spot.spot_overhead_usd > 0
    assert any("assumed 0.1/h" in line for line in spot.lines)


def test_spot_without_a_rate_or_with_hopeless_risk_is_refused():
    with pytest.raises(ValueError):
        job_cost(JOB, PricedOffer(3.0, 1, "spot"), PER_SECOND, GP3, FREE_EGRESS)
    with pytest.raises(ValueError, match="checkpoint more often"):
        job_cost(JOB, PricedOffer(3.0, 1, "spot"), PER_SECOND, GP3, FREE_EGRESS, SpotRisk(5.0, "storm"))


def test_aws_advisor_bands_become_hourly_rates():
    assert interruptions_per_hour_from_band(5, 10) == pytest.approx(0.075 / 730)
    assert interruptions_per_hour_from_band(20, 100) == pytest.approx(0.25 / 730)  # the open band counts as 20-30%


def _rank(offers):
    return [name for name, _ in sorted(offers.items(), key=lambda kv: kv[1])]


def test_billing_increment_reverses_the_hourly_ranking():
    # B is cheaper per hour but bills whole hours: a 1.1 h job pays 2 h there.
    hourly_price = {"A": 3.00, "B": 2.90}
    total = {
        "A": job_cost(JOB, PricedOffer(3.00, 1, "on_demand"), PER_SECOND, GP3, FREE_EGRESS).total_usd,
        "B": job_cost(JOB, PricedOffer(2.90, 1, "on_demand"), HOURLY, GP3, FREE_EGRESS).total_usd,
    }
    assert _rank(hourly_price) == ["B", "A"]
    assert _rank(total) == ["A", "B"]


def test_egress_reverses_the_hourly_ranking():
    # A full 70B result (140 GB) downloaded from a provider that charges egress.
    job = JobSpec(hours=2.0, storage_gb=300, checkpoint_gb=140, egress_gb=140, retention_h=0)
    total = {
        "A": job_cost(job, PricedOffer(10.0, 1, "on_demand"), PER_SECOND, GP3, FREE_EGRESS).total_usd,
        "B": job_cost(job, PricedOffer(9.0, 1, "on_demand"), PER_SECOND, GP3, EgressTerms((EgressTier(0, None, 0.09),))).total_usd,
    }
    assert _rank({"A": 10.0, "B": 9.0}) == ["B", "A"]
    assert _rank(total) == ["A", "B"]


def test_throughput_reverses_the_hourly_ranking():
    # A slower, cheaper card: half the hourly price but three times the run time.
    fast = job_cost(JobSpec(hours=1.0, storage_gb=20, checkpoint_gb=1, egress_gb=0.1), PricedOffer(4.0, 1, "on_demand"),
                    PER_SECOND, GP3, FREE_EGRESS)  # fmt: skip
    slow = job_cost(JobSpec(hours=3.0, storage_gb=20, checkpoint_gb=1, egress_gb=0.1), PricedOffer(2.0, 1, "on_demand"),
                    PER_SECOND, GP3, FREE_EGRESS)  # fmt: skip
    assert slow.total_usd > fast.total_usd


@pytest.mark.parametrize(("text", "tokens"), [("200M", 2e8), ("1.5B", 1.5e9), ("500k", 5e5), ("1000", 1000.0)])
def test_token_counts(text, tokens):
    assert token_count(text) == tokens


@pytest.mark.parametrize("text", ["-5M", "0", "lots", "5X"])
def test_bad_token_counts_are_one_clear_error(text):
    with pytest.raises(UserInputError, match="--tokens"):
        token_count(text)


@pytest.mark.parametrize(("text", "unit", "hours"), [("30m", "h", 0.5), ("7d", "h", 168), ("2", "h", 2), ("45", "m", 0.75)])
def test_durations(text, unit, hours):
    assert duration_hours(text, "--x", default_unit=unit) == hours


def test_bad_durations():
    with pytest.raises(UserInputError, match="--retention"):
        duration_hours("-1d", "--retention", allow_zero=True)
    with pytest.raises(UserInputError, match="--checkpoint-every"):
        duration_hours("0", "--checkpoint-every")


def test_each_restart_on_spot_loses_half_a_billing_increment():
    risk = SpotRisk(0.2, "test")
    per_second = job_cost(JOB, PricedOffer(3.0, 1, "spot"), BillingTerms(1, 0), GP3, FREE_EGRESS, risk)
    hourly = job_cost(JOB, PricedOffer(3.0, 1, "spot"), BillingTerms(3600, 0), GP3, FREE_EGRESS, risk)
    assert hourly.expected_interruptions == pytest.approx(per_second.expected_interruptions)
    rounding = hourly.expected_interruptions * 1800 / 3600 * 3.0
    assert hourly.spot_overhead_usd == pytest.approx(
        (billed_seconds(hourly.hours * 3600, BillingTerms(3600, 0)) - 7200) / 3600 * 3.0 + rounding
    )


def test_fixed_overheads_add_model_load_checkpoint_saves_and_asked_evaluation_to_wall_clock():
    from gpucat.cost.rank import CostOptions, fixed_overheads_h
    from gpucat.cost.sizes import JobSizes

    sizes = JobSizes(dataset_gb=1.0, base_weights_gb=16.0, checkpoint_gb=36.0, storage_gb=200.0, result_gb=16.0)
    options = CostOptions(tokens=1e9, checkpoint_every_h=0.5, checkpoint_write_gbps=1.0, load_gbps=2.0)
    parts = fixed_overheads_h(sizes, options, train_h=2.2, eval_s_per_token=1e-4, spot=False)
    assert parts == {"model load": pytest.approx(16 / 2 / 3600), "checkpoint saves": pytest.approx(4 * 36 / 3600)}
    with_eval = fixed_overheads_h(sizes, replace(options, eval_tokens=3.6e6), 2.2, 1e-4, spot=False)
    assert with_eval["evaluation"] == pytest.approx(0.1)
    # spot rows count their checkpoint writes in the interruption arithmetic, not twice
    assert "checkpoint saves" not in fixed_overheads_h(sizes, options, 2.2, 1e-4, spot=True)
    rarer = fixed_overheads_h(sizes, replace(options, checkpoint_every_h=1.0), 2.2, 1e-4, spot=False)
    assert rarer["checkpoint saves"] == pytest.approx(parts["checkpoint saves"] / 2)
