"""The estimator against every measured point of the reference's calibration set (section 3)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.memory import get_model_arch
from gpucat.memory.bands import load_bands, load_coverage
from gpucat.memory.calibration import (
    AIM_MAX_ABS_ERROR,
    UNIT_TO_GB,
    band_coverage,
    compute_bands,
    direction,
    evaluate,
    fit_allocator_margin,
    fit_constants,
    held_to_aim,
    load_points,
    loso_results,
    margin_fit_points,
    summarize,
    within,
)
from gpucat.memory.estimator import FITTED
from gpucat.memory.settings import TrainSettings

POINTS = load_points()
RESULTS = {r.point.id: r for r in evaluate(POINTS)}
HELD = held_to_aim(list(RESULTS.values()))

# Points not held to the aim, each with its reason in the data file. Changing this set is a
# decision to review, not a side effect.
EXCLUDED = {
    "peft-dora-r32", "peft-boft", "peft-loha-r32", "peft-osf-r128",  # PEFT methods that are not adapters
    "tt-baseline",  # unknown padded length
    "tt2-full-4gpu", "tt2-early-full-2gpu",  # unexplained, metric and versions unstated
    "tt2-tut-qlora",  # reserved pool set by model loading
    "lit-llama2-7b-fsdp-b1", "lit-llama2-7b-fsdp-b2", "lit-llama2-7b-fsdp-b4", "lit-llama2-13b-fsdp",  # loading peak
    "lf-unsloth-fa2", "lf-unsloth-4bit",  # custom kernels
    "bert-context", "bert-loaded",  # not training runs
    "hub-llama31-8b-lora", "hub-llama31-8b-qlora",  # repeat the llama-3-8b rows
    "hub-llama32-1b-full", "hub-llama32-3b-full", "hub-phi3-full",  # GPU count contradicts the figure
    "tt31-8b-full-a6000", "tt31-8b-lora-a6000",  # what differs from the 4090 rows is not stated
}

# Held points the estimator misses by more than 35%, each a class the estimate prints a
# "not modelled" warning for. Shrinking this set is progress; growing it is a regression to review.
KNOWN_MISSES = {
    # LitGPT FSDP full fine-tuning of a 256k-vocabulary model (checkpoint loading suspected)
    "hub-gemma2b-full-4gpu",
    # DeepSpeed ZeRO-3 parameter offload residency beyond stage3_max_live_parameters
    "peft22-mt0-lora-z3off", "peft22-bloomz-lora-z3off",
    # torchtune 405B QLoRA over 8 GPUs (torchao NF4 under FSDP2): over-estimated, the safe side
    "tt31-405b-qlora-8",
    # FSDP-QLoRA at 512 tokens, reserved memory (Answer.AI's script, bitsandbytes 0.43.0)
    "aai-qlora-512",
}
# Out-of-memory runs the estimate says fit: LitGPT's FSDP full-state-dict load (not modelled).
KNOWN_OOM_MISSES = {"hub-llama2-7b-full-oom", "hub-llama3-8b-full-oom"}
LOSO = {r.point.id: r for r in loso_results(POINTS)[0]}


def test_every_row_of_the_reference_is_a_point():
    refs = {p.ref for p in POINTS}
    numbered = {f"3.1 #{i}" for i in range(1, 15)} | {f"3.4 #{i}" for i in range(35, 45)}
    numbered |= {f"3.5 #{i}" for i in range(52, 62)} | {f"3.7 #{i}" for i in range(76, 87)}
    assert numbered <= refs
    assert {"3.4(d)", "3.4(e)", "3.4(f)", "3.4(d,f)", "3.5(b)", "3.5(b) oom.md", "3.6"} <= refs
    assert len(POINTS) == len({p.id for p in POINTS}) == 160
    assert {p.group for p in POINTS} == {
        "peft", "torchtune-flags", "torchtune-llama2", "litgpt", "llama-factory", "hf-bert",
        "litgpt-config-hub", "peft-readme-2022", "peft-docs-70b", "torchtune-llama31",
        "answerai-fsdp-qlora",
    }


def test_the_excluded_points_are_exactly_these_and_say_why():
    excluded = {p.id: p.exclude for p in POINTS if p.exclude}
    assert set(excluded) == EXCLUDED
    assert all(len(reason) > 30 for reason in excluded.values())


def test_the_out_of_sample_aim_holds():
    """Leave one source out: median |error| <= 10% and >= 80% within +-25%, >= 80 points, >= 8 sources."""
    held = [LOSO[r.point.id] for r in HELD]
    summary = summarize([r.error for r in held])
    assert summary.count == 124
    assert len({r.point.group for r in held}) == 11
    assert summary.median_abs_error <= 0.10
    assert within([r.error for r in held], 0.25) >= 0.8 * summary.count


def test_the_estimate_does_not_lean_low_or_high():
    """Leave one source out, the signed median is within +-3% and under-estimates are not the rule."""
    d = direction([LOSO[r.point.id].error for r in HELD])
    assert abs(d.median_signed_error) <= 0.03
    assert 0.35 <= d.under_share <= 0.65


def test_bands_hold_about_80_percent_of_held_out_measurements_per_method():
    coverage = band_coverage([LOSO[r.point.id] for r in HELD], load_bands())
    assert set(coverage) == {"full", "lora", "qlora", "all"}
    for method, (inside, n) in coverage.items():
        assert 0.75 <= inside / n <= 0.90, (method, inside, n)
    assert load_coverage() == {m: round(inside / n, 3) for m, (inside, n) in coverage.items()}


def test_loso_refits_the_margin_without_the_held_out_source():
    """Holding out a source that has reserved points changes the fit set: the margin is refitted
    on the other sources only, and a source without reserved points sees the full fit."""
    _, fitted = loso_results(POINTS)
    without_peft = tuple(p for p in POINTS if p.group != "peft")
    assert fitted["peft"].allocator_margin == fit_allocator_margin(without_peft)
    assert all(p.group != "peft" for p in margin_fit_points(without_peft))
    assert fitted["hf-bert"].allocator_margin == fit_allocator_margin(POINTS)


def test_the_shipped_constants_are_the_fit_on_every_point():
    assert FITTED == fit_constants(POINTS)
    assert FITTED.allocator_margin == fit_allocator_margin(POINTS)


def test_the_shipped_error_bands_are_the_current_loso_evaluation():
    """data/error_bands.json is written by the bench; it must match a fresh evaluation."""
    assert load_bands() == compute_bands(list(LOSO.values()))


@pytest.mark.parametrize("point_id", sorted(r.point.id for r in HELD if r.point.id not in KNOWN_MISSES))
def test_each_held_point_is_within_35_percent(point_id):
    result = RESULTS[point_id]
    assert abs(result.error) <= AIM_MAX_ABS_ERROR, (
        f"{point_id}: measured {result.point.measured_gb:.2f} GB ({result.point.metric}), "
        f"estimated {result.estimated_gb:.2f} GB"
    )


def test_the_known_misses_are_exactly_the_points_beyond_35_percent():
    beyond = {r.point.id for r in HELD if abs(r.error) > AIM_MAX_ABS_ERROR}
    assert beyond == KNOWN_MISSES


@pytest.mark.parametrize("point_id", sorted(KNOWN_MISSES))
def test_each_known_miss_carries_a_not_modelled_warning(point_id):
    assert RESULTS[point_id].estimate.not_modelled, point_id


@pytest.mark.parametrize("point_id", [p.id for p in POINTS if p.oom_above_gb is not None])
def test_out_of_memory_runs_are_predicted_not_to_fit(point_id):
    assert RESULTS[point_id].oom_predicted == (point_id not in KNOWN_OOM_MISSES)


def test_naive_rules_do_worse_on_the_same_points():
    ours = summarize([r.error for r in HELD])
    for rule in ("llama-factory", "accelerate"):
        theirs = summarize([r.naive_error[rule] for r in HELD])
        assert theirs.median_abs_error > 2 * ours.median_abs_error, rule


def test_naive_rules_arithmetic():
    result = RESULTS["lit-llama2-7b-nf4"]  # QLoRA 4-bit on a 6.74B model
    assert result.naive_gb == pytest.approx({"llama-factory": 6.738415616 / 2, "accelerate": None})
    result = RESULTS["peft-full"]  # pure bf16 full fine-tuning of 3.21B
    assert result.naive_gb == pytest.approx({"llama-factory": 8 * 3.212749824, "accelerate": 8 * 3.212749824})
    result = RESULTS["bert-b4"]  # fp32 AdamW
    assert result.naive_gb["accelerate"] == pytest.approx(16 * 0.335141888)


def test_units_and_metrics_are_converted_on_our_side():
    assert UNIT_TO_GB == {"GB": 1.0, "GiB": 1.073741824, "MiB": 0.001048576}
    bert = RESULTS["bert-b4"]
    assert bert.point.measured_gb == pytest.approx(14949 * 2**20 / 1e9)
    # nvidia-smi with the group's measured 1.408 GB context instead of our 0.5 GB
    assert bert.estimated_gb == pytest.approx(bert.estimate.per_gpu_gb - 0.5 + 1.408)
    lit = RESULTS["lit-llama2-7b-b1"]
    assert lit.estimated_gb == pytest.approx(lit.estimate.torch_allocated_gb())


def test_a_point_gives_what_the_cli_gives_for_the_same_flags():
    point = next(p for p in POINTS if p.id == "lf-hf-4bit")
    s = point.settings
    assert s == TrainSettings(method="qlora", lora_rank=8, lora_targets="qv", batch_size=4, seq_len=1024,
                              grad_accumulation=2, attention="eager", bnb_keeps_4bit_inputs=True)
    cli = CliRunner().invoke(app, [
        "memory", "--model", point.model, "--method", "qlora", "--quant", "nf4-dq", "--lora-rank", "8",
        "--lora-targets", "qv", "--batch", "4", "--seq-len", "1024", "--grad-accum", "2", "--attention", "eager",
        "--json",
    ])
    assert cli.exit_code == 0, cli.output
    from_cli = json.loads(cli.stdout)
    # the CLI runs current bitsandbytes; the point's legacy flag only adds saved inputs
    from dataclasses import replace

    from gpucat.memory import estimate_memory

    same = estimate_memory(get_model_arch(point.model), replace(s, bnb_keeps_4bit_inputs=False))
    assert from_cli["per_gpu_gb"] == same.per_gpu_gb
    assert from_cli["breakdown"] == same.breakdown
