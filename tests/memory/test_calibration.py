"""The estimator against every measured point of the reference's calibration set (section 3)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.memory import get_model_arch
from gpucat.memory.calibration import (
    AIM_MAX_ABS_ERROR,
    AIM_MEDIAN_ABS_ERROR,
    UNIT_TO_GB,
    evaluate,
    held_to_aim,
    load_points,
    summarize,
)
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
}


def test_every_row_of_the_reference_is_a_point():
    refs = {p.ref for p in POINTS}
    numbered = {f"3.1 #{i}" for i in range(1, 15)} | {f"3.4 #{i}" for i in range(35, 45)}
    numbered |= {f"3.5 #{i}" for i in range(52, 62)} | {f"3.7 #{i}" for i in range(76, 87)}
    assert numbered <= refs
    assert {"3.4(d)", "3.4(e)", "3.4(f)", "3.4(d,f)", "3.5(b)", "3.5(b) oom.md", "3.6"} <= refs
    assert len(POINTS) == len({p.id for p in POINTS}) == 82


def test_the_excluded_points_are_exactly_these_and_say_why():
    excluded = {p.id: p.exclude for p in POINTS if p.exclude}
    assert set(excluded) == EXCLUDED
    assert all(len(reason) > 30 for reason in excluded.values())


def test_the_aim_holds_on_the_held_points():
    summary = summarize([r.error for r in HELD])
    assert summary.count == 59
    assert summary.median_abs_error <= AIM_MEDIAN_ABS_ERROR
    assert summary.max_abs_error <= AIM_MAX_ABS_ERROR


@pytest.mark.parametrize("point_id", [r.point.id for r in HELD])
def test_each_held_point_is_within_35_percent(point_id):
    result = RESULTS[point_id]
    assert abs(result.error) <= AIM_MAX_ABS_ERROR, (
        f"{point_id}: measured {result.point.measured_gb:.2f} GB ({result.point.metric}), "
        f"estimated {result.estimated_gb:.2f} GB"
    )


@pytest.mark.parametrize("point_id", [p.id for p in POINTS if p.oom_above_gb is not None])
def test_out_of_memory_runs_are_predicted_not_to_fit(point_id):
    assert RESULTS[point_id].oom_predicted


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
