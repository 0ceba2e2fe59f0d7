"""The time model: each mechanism, the calibration's leave-one-source-out error, the stored constants."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpucat.cost.calibration import AIM, error_band, fit, load_points, loso, summarize, usable
from gpucat.cost.throughput import (
    CAUSAL_FRACTION,
    Hardware,
    ModelShape,
    Workload,
    attention_flops_per_token,
    communication_bytes,
    flops_per_token,
    link_gbps,
    load_factors,
    model_shape,
    throughput,
)  # fmt: skip
from gpucat.memory import TrainSettings, get_model_arch

SHAPE = ModelShape(matmul_params=1_000_000, layers=2, attn_dim=8, params=1_000_000, trainable_params=1_000_000)
H100 = Hardware(gpu_model="H100-SXM", family="H100", architecture="Hopper", peak_tflops=989, memory_bandwidth_gbps=3350,
                nvlink_gbps=900)  # fmt: skip
L8B = get_model_arch("llama-3.1-8b")


def run(settings: TrainSettings, hw: Hardware = H100, factors=None, workload=None, arch=L8B):
    return throughput(model_shape(arch, settings), settings, hw, factors or load_factors(), workload)


def test_full_fine_tuning_is_six_flops_per_weight_plus_causal_attention():
    s = TrainSettings(method="full", seq_len=16, grad_checkpointing=False)
    attention = 2 * 2 * 16 * 8 * 2 * 0.5  # QK^T and AV per layer over the sequence, half under the causal mask
    assert flops_per_token(SHAPE, s) == {"forward": 2e6 + attention, "backward": 4e6 + 2 * attention}


def test_causal_attention_is_half_of_full_and_packing_spans_documents():
    s = TrainSettings(method="full", seq_len=4096)
    full = 2 * 2 * 4096 * 8 * 2
    assert CAUSAL_FRACTION == 0.5
    assert attention_flops_per_token(SHAPE, s) == full / 2
    assert attention_flops_per_token(SHAPE, s, Workload(attention_len=512)) == full / 2 / 8
    packed = run(TrainSettings(method="lora", seq_len=8192, batch_size=1))
    apart = run(TrainSettings(method="lora", seq_len=8192, batch_size=1), workload=Workload(attention_len=1024))
    assert apart.seconds_per_token["attention"] == pytest.approx(packed.seconds_per_token["attention"] / 8)
    assert apart.tokens_per_s > packed.tokens_per_s


def test_lora_skips_frozen_weight_gradients_but_backpropagates_through_them():
    shape = replace(SHAPE, trainable_params=1000)
    s = TrainSettings(method="lora", seq_len=16, grad_checkpointing=False)
    attention = 2 * 2 * 16 * 8 * 2 * 0.5
    assert flops_per_token(shape, s) == {"forward": 2e6 + 2000 + attention, "backward": 2e6 + 2 * attention + 4000}


def test_checkpointing_recomputes_one_forward():
    parts = flops_per_token(SHAPE, TrainSettings(method="full", seq_len=16, grad_checkpointing=True))
    assert parts["recompute"] == parts["forward"]


def test_qlora_dequantization_is_paid_per_micro_batch_and_slows_qlora():
    lora = TrainSettings(method="lora", batch_size=1, seq_len=512)
    qlora = replace(lora, method="qlora")
    t_lora, t_qlora = run(lora), run(qlora)
    assert t_lora.seconds_per_token["dequantization"] == 0 < t_qlora.seconds_per_token["dequantization"]
    assert t_qlora.tokens_per_s < t_lora.tokens_per_s
    bigger = run(replace(qlora, batch_size=4))  # the weights are expanded once per micro-batch
    assert bigger.seconds_per_token["dequantization"] == pytest.approx(t_qlora.seconds_per_token["dequantization"] / 4)
    without = replace(load_factors(), dequant_bytes_per_param=0.0)
    assert run(qlora, factors=without).tokens_per_s > t_qlora.tokens_per_s


def test_adapters_add_memory_bound_traffic_and_kernels():
    lora = run(TrainSettings(method="lora", lora_targets="all-linear", batch_size=1, seq_len=512))
    qv = run(TrainSettings(method="lora", lora_targets="qv", batch_size=1, seq_len=512))
    assert lora.seconds_per_token["adapter"] > qv.seconds_per_token["adapter"] > 0
    assert lora.seconds_per_token["host"] > qv.seconds_per_token["host"] > 0
    assert run(TrainSettings(method="full", batch_size=1, seq_len=512)).seconds_per_token["adapter"] == 0


def test_per_step_host_overhead_makes_small_micro_batches_slower_per_token():
    small, large = TrainSettings(method="lora", batch_size=1, seq_len=256), TrainSettings(method="lora", batch_size=8, seq_len=256)
    assert run(small).seconds_per_token["host"] == pytest.approx(8 * run(large).seconds_per_token["host"])
    assert run(small).tokens_per_s < run(large).tokens_per_s
    no_host = replace(load_factors(), host_s_per_kernel=0.0)
    assert run(small, factors=no_host).tokens_per_s > run(small).tokens_per_s


def test_large_vocabulary_loss_costs_time_unless_fused():
    qwen = get_model_arch("qwen2.5-0.5b")  # 151,936 logits a token
    standard = run(TrainSettings(method="full", cross_entropy="standard"), arch=qwen)
    fused = run(TrainSettings(method="full", cross_entropy="fused"), arch=qwen)
    assert standard.seconds_per_token["loss"] == pytest.approx(151_936 * 16 / 3350e9)
    assert fused.seconds_per_token["loss"] == 0 and fused.tokens_per_s > standard.tokens_per_s


def test_communication_grows_over_pcie_against_nvlink():
    s = TrainSettings(method="full", precision="bf16-mixed", sharding="fsdp", gpus=8, batch_size=1, seq_len=1024)
    nvswitch = run(s, replace(H100, gpus=8, interconnect="nvswitch"), factors=replace(load_factors(), overlap=0.0))
    pcie = run(s, replace(H100, gpus=8, interconnect="pcie"), factors=replace(load_factors(), overlap=0.0))
    assert pcie.seconds_per_token["communication"] == pytest.approx(nvswitch.seconds_per_token["communication"] * 450 / 25)
    assert pcie.scaling_efficiency < nvswitch.scaling_efficiency <= 1
    assert any("PCIe" in a for a in pcie.assumptions)


def test_the_node_fabric_is_shared_by_the_nodes_gpus():
    two_nodes = replace(H100, gpus=16, nodes=2, interconnect="nvswitch", fabric="infiniband", fabric_gbps=3200)
    assert link_gbps(two_nodes) == (3200 / 8 / 8, [])
    assert link_gbps(replace(two_nodes, fabric_gbps=None))[0] == 400 / 8 / 8


@pytest.mark.parametrize("sharding, per_micro, per_step", [("fsdp", True, False), ("zero3", True, False), ("zero2", True, True),
                                                            ("zero1", False, True), ("ddp", False, True)])  # fmt: skip
def test_sharding_schemes_move_bytes_when_they_must(sharding, per_micro, per_step):
    micro, step = communication_bytes(SHAPE, TrainSettings(method="full", sharding=sharding), 8)
    assert (micro > 0, step > 0) == (per_micro, per_step)


def test_four_bit_weights_are_gathered_at_their_stored_width():
    lora = TrainSettings(method="lora", sharding="fsdp", grad_checkpointing=False)
    shape = replace(model_shape(L8B, lora), trainable_params=0)
    lora_bytes, _ = communication_bytes(shape, lora, 2)
    qlora_bytes, _ = communication_bytes(shape, replace(lora, method="qlora"), 2)
    assert qlora_bytes == pytest.approx(lora_bytes * 0.516 / 2)


def test_uncalibrated_gpus_take_the_nearest_calibrated_card_by_bandwidth_per_flop_and_say_so():
    factors = load_factors()
    l4 = Hardware(gpu_model="L4", family="L4", architecture="Ada Lovelace", peak_tflops=121, memory_bandwidth_gbps=300)
    out = run(TrainSettings(method="full"), l4)
    nearest = min(factors.bytes_per_flop, key=lambda f: abs(factors.bytes_per_flop[f] - 300e9 / 121e12 * 1e3))
    assert nearest == "L40S"
    assert out.utilization == factors.utilization["L40S"]
    assert any("no calibration for L4" in a and "L40S" in a for a in out.assumptions)
    assert run(TrainSettings(method="full"), H100).assumptions == ()


def test_leave_one_source_out_error_meets_the_aim():
    points = load_points()
    results = loso(points)
    summary = summarize(results)
    assert summary.count >= 80
    assert summary.median_abs_error <= 0.20
    assert summary.within_aim >= 0.7 * summary.count
    low, high = error_band(results)
    assert low < 1 < high


def test_stored_constants_are_the_fit_of_every_usable_point():
    points = load_points()
    stored = load_factors()
    assert set(stored.fitted_on) == {p.id for p in usable(points)}
    refit = fit(points)
    for family, value in stored.utilization.items():
        assert refit.utilization[family] == pytest.approx(value, rel=0.03)
    assert refit.adapter == pytest.approx(stored.adapter, rel=0.03)
    assert refit.attention_efficiency == pytest.approx(stored.attention_efficiency, rel=0.05)


def test_every_point_names_its_source_quote_and_a_known_gpu():
    data = json.loads((Path(__file__).parents[2] / "gpucat" / "cost" / "data" / "throughput_points.json").read_text())
    ids = [p["id"] for g in data["groups"] for p in g["points"]]
    assert len(ids) == len(set(ids))
    for group in data["groups"]:
        assert "@" in group["source"], f"{group['id']} source lacks a commit"
    points = usable(load_points())
    assert len({p.source for p in points}) >= 8 and len({p.framework for p in points}) >= 3
    assert {p.settings.method for p in points} == {"full", "lora", "qlora"}
    assert any(p.hardware.nodes > 1 for p in points) and any(p.added_after_mechanisms for p in points)
    assert AIM == 0.35
