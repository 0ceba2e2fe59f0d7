"""The time model: work per token by method, the calibration aim, and the stored factors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpucat.cost.calibration import AIM, evaluate, fit, in_role, load_points, summarize
from gpucat.cost.throughput import Hardware, ModelShape, flops_per_token, load_factors, model_shape, throughput
from gpucat.memory import TrainSettings, get_model_arch

SHAPE = ModelShape(matmul_params=1_000_000, layers=2, attn_dim=8, params=1_000_000, trainable_params=1_000_000)
H100 = Hardware(gpu_model="H100-SXM", family="H100", architecture="Hopper", peak_tflops=989, memory_bandwidth_gbps=3350,
                nvlink_gbps=900)  # fmt: skip


def test_full_fine_tuning_is_six_flops_per_weight_plus_attention():
    s = TrainSettings(method="full", seq_len=16, grad_checkpointing=False)
    attention = 2 * 2 * 16 * 8 * 2 * 1.0  # QK^T and AV per layer, over the sequence
    assert flops_per_token(SHAPE, s) == {"forward": 2e6 + attention, "backward": 4e6 + 2 * attention}


def test_lora_skips_frozen_weight_gradients_but_backpropagates_through_them():
    shape = replace(SHAPE, trainable_params=1000)
    s = TrainSettings(method="lora", seq_len=16, grad_checkpointing=False)
    attention = 2 * 2 * 16 * 8 * 2
    assert flops_per_token(shape, s) == {"forward": 2e6 + 2000 + attention, "backward": 2e6 + 2 * attention + 4000}


def test_checkpointing_recomputes_one_forward():
    s = TrainSettings(method="full", seq_len=16, grad_checkpointing=True)
    parts = flops_per_token(SHAPE, s)
    assert parts["recompute"] == parts["forward"]


def test_qlora_pays_for_dequantization_and_moe_counts_only_routed_experts():
    arch = get_model_arch("llama-3.1-8b")
    lora = TrainSettings(method="lora", batch_size=1, seq_len=512)
    qlora = replace(lora, method="qlora")
    factors = load_factors()
    t_lora = throughput(model_shape(arch, lora), lora, H100, factors)
    t_qlora = throughput(model_shape(arch, qlora), qlora, H100, factors)
    assert t_qlora.seconds_per_token["dequantization"] > 0 == t_lora.seconds_per_token["dequantization"]
    assert t_qlora.tokens_per_s < t_lora.tokens_per_s
    moe = get_model_arch("mixtral-8x7b")
    shape = model_shape(moe, TrainSettings(method="full"))
    assert shape.matmul_params < 0.4 * shape.params  # 2 of 8 experts run per token


def test_pcie_scales_worse_than_nvswitch_for_a_sharded_full_fine_tune():
    arch = get_model_arch("llama-3.1-8b")
    s = TrainSettings(method="full", precision="bf16-mixed", sharding="fsdp", gpus=8, batch_size=1, seq_len=1024)
    shape = model_shape(arch, s)
    nvswitch = throughput(shape, s, replace(H100, gpus=8, interconnect="nvswitch"), load_factors())
    pcie = throughput(shape, s, replace(H100, gpus=8, interconnect="pcie"), load_factors())
    assert pcie.scaling_efficiency < nvswitch.scaling_efficiency <= 1
    assert any("PCIe" in a for a in pcie.assumptions)


def test_uncalibrated_gpus_borrow_a_stated_utilization():
    factors = load_factors()
    s = TrainSettings(method="lora")
    shape = model_shape(get_model_arch("llama-3.1-8b"), s)
    mi300x = Hardware(gpu_model="MI300X", family="MI300X", architecture="CDNA 3", peak_tflops=1307.4, memory_bandwidth_gbps=5300)
    out = throughput(shape, s, mi300x, factors)
    assert any("no calibration for MI300X (CDNA 3)" in a for a in out.assumptions)
    h200 = replace(H100, gpu_model="H200-SXM", family="H200", memory_bandwidth_gbps=4800)
    out = throughput(shape, s, h200, factors)  # a Hopper card: the calibrated Hopper families' mean
    assert out.utilization == pytest.approx(factors.utilization["H100"] * factors.adapter)
    assert any("mean of calibrated Hopper cards" in a for a in out.assumptions)
    assert throughput(shape, s, H100, factors).assumptions == ()


def test_held_back_points_are_within_the_aim():
    results = evaluate(load_points(), load_factors())
    held = summarize(in_role(results, "held"))
    assert held.count >= 15
    assert held.within_aim == held.count, [(r.point.id, round(r.error, 2)) for r in in_role(results, "held") if abs(r.error) > AIM]


def test_stored_factors_are_the_fit_of_the_fit_points():
    points = load_points()
    stored = load_factors()
    assert set(stored.fitted_on) == {p.id for p in points if p.role == "fit" and not p.exclude}
    refit = fit(points, stored)
    for family, value in stored.utilization.items():
        assert refit.utilization[family] == pytest.approx(value, rel=0.02)
    assert refit.families == stored.families
    assert refit.adapter == pytest.approx(stored.adapter, rel=0.02)


def test_every_point_names_its_source_and_a_known_gpu():
    data = json.loads((Path(__file__).parents[2] / "gpucat" / "cost" / "data" / "throughput_points.json").read_text())
    ids = [p["id"] for g in data["groups"] for p in g["points"]]
    assert len(ids) == len(set(ids))
    for group in data["groups"]:
        assert "@" in group["source"], f"{group['id']} source lacks a commit"
        assert all(p["role"] in ("fit", "held") for p in group["points"])
