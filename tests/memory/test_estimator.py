"""The estimator's arithmetic, component by component, and its validation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpucat.cli._common import error_line
from gpucat.memory import TrainSettings, estimate_memory, get_model_arch, param_counts, per_gpu_need
from gpucat.memory.activations import ActivationPolicy, estimate_activations, layer_bytes
from gpucat.memory.archs import ModelArch
from gpucat.memory.estimator import ALLOCATOR_MARGIN, CUDA_CONTEXT_GB, FITTED
from gpucat.schemas.errors import UserInputError

LLAMA8 = get_model_arch("llama-3.1-8b")
P8 = LLAMA8.params
# A small Llama-style model whose saved tensors can be counted by hand.
TOY = ModelArch(
    name="toy/toy", alias="toy", family="llama", arch_type="decoder", params=0, n_layers=2,
    n_encoder_layers=0, hidden_size=64, n_heads=4, n_kv_heads=2, head_dim=16, intermediate_size=128,
    vocab_size=1000, tied_embeddings=False,
)


def per_param(estimate, key: str, params: int) -> float:
    return estimate.breakdown.get(key, 0.0) * 1e9 / params


# --- activations, counted by hand -------------------------------------------------------


def test_lora_layer_bytes_per_token_by_hand():
    """bf16, LoRA r4 on q and v, flash attention, per token of one layer:
    2 RMSNorms keep fp32 inputs (2 x 4 x 64), q/v's shared input (2 x 64), q, k, v (2 x (64 + 32 + 32)),
    attention output + fp32 log-sum-exp (2 x 64 + 4 x 4), SwiGLU gate/act/up (3 x 2 x 128),
    two rank-4 LoRA intermediates (2 x 2 x 4)."""
    p = ActivationPolicy(act_bytes=2, autocast=False, saved_inputs=frozenset({"q", "v"}), norms_trainable=False,
                         flash=True, lora_rank=4, lora_modules=frozenset({"q", "v"}))
    expected = 2 * 4 * 64 + 2 * 64 + 2 * (64 + 32 + 32) + (2 * 64 + 4 * 4) + 3 * 2 * 128 + 2 * 2 * 4
    assert layer_bytes(TOY, p, keys=10) == expected


def test_full_finetuning_layer_bytes_per_token_by_hand():
    """Full fine-tuning adds the norms' normalized copies, every linear's input, and eager
    attention's fp32 + bf16 probabilities over 10 keys with K/V repeated to 4 heads."""
    p = ActivationPolicy(act_bytes=2, autocast=False, saved_inputs=frozenset({"q", "k", "v", "o", "gate", "up", "down"}),
                         norms_trainable=True, flash=False)
    norms = 2 * (4 * 64 + 2 * 64)
    inputs = 2 * 64 + 2 * 64 + 2 * 64 + 2 * 128  # qkv, o, gate/up, down
    attention = 2 * (64 + 64 + 64) + 4 * 10 * (4 + 2)
    mlp = 3 * 2 * 128
    assert layer_bytes(TOY, p, keys=10) == norms + inputs + attention + mlp


def test_checkpointing_keeps_layer_inputs_and_recomputes_one_layer():
    p = ActivationPolicy(act_bytes=2, autocast=False, saved_inputs=frozenset(), norms_trainable=False, flash=True)
    kwargs = dict(batch=2, seq_len=10, target_len=10, cross_entropy="standard")
    full = estimate_activations(TOY, p, checkpointing=False, **kwargs)
    ckpt = estimate_activations(TOY, p, checkpointing=True, **kwargs)
    head = 4 * 64 * 20  # the final norm's fp32 input
    assert full.saved == 2 * layer_bytes(TOY, p, keys=10) * 20 + head
    assert ckpt.saved == 2 * (2 * 64) * 20 + head
    assert ckpt.recompute == layer_bytes(TOY, p, keys=10) * 20
    assert full.logits == ckpt.logits == (2 + 12) * 20 * 1000


@pytest.mark.parametrize(("loss", "bytes_per_logit"), [("standard", 14), ("chunked", 2 + 4 + 1), ("fused", 2 + 0.5)])
def test_logits_buffers_by_loss_implementation(loss, bytes_per_logit):
    p = ActivationPolicy(act_bytes=2, autocast=False, saved_inputs=frozenset(), norms_trainable=False, flash=True)
    acts = estimate_activations(TOY, p, batch=1, seq_len=8, target_len=8, checkpointing=True, cross_entropy=loss)
    assert acts.logits == bytes_per_logit * 8 * 1000


# --- model states ------------------------------------------------------------------------

FULL = TrainSettings(method="full", batch_size=1, seq_len=16, grad_checkpointing=True)


@pytest.mark.parametrize(
    ("precision", "optimizer", "expected"),
    [
        ("bf16-true", "adamw", {"weights_trainable": 2, "master_weights": 0, "gradients": 2, "optimizer_states": 4}),
        ("bf16-mixed", "adamw", {"weights_trainable": 2, "master_weights": 4, "gradients": 4, "optimizer_states": 8}),
        ("fp16-mixed", "adamw", {"weights_trainable": 2, "master_weights": 4, "gradients": 4, "optimizer_states": 8}),
        ("fp32", "adamw", {"weights_trainable": 4, "master_weights": 0, "gradients": 4, "optimizer_states": 8}),
        ("bf16-true", "adamw-8bit", {"weights_trainable": 2, "master_weights": 0, "gradients": 2,
                                     "optimizer_states": 2 * (1 + 4 / 256)}),
        ("bf16-mixed", "sgd", {"weights_trainable": 2, "master_weights": 4, "gradients": 4, "optimizer_states": 4}),
    ],
)
def test_bytes_per_parameter_of_full_finetuning(precision, optimizer, expected):
    e = estimate_memory(LLAMA8, replace(FULL, precision=precision, optimizer=optimizer))
    assert e.peak_phase == "optimizer-step"  # short sequences: the step holds the most
    got = {key: per_param(e, key, P8) for key in expected}
    assert got == pytest.approx(expected, abs=2e-3)


def test_mixed_precision_full_finetuning_is_the_18_bytes_rule():
    e = estimate_memory(LLAMA8, replace(FULL, precision="bf16-mixed"))
    states = sum(e.breakdown[k] for k in ("weights_trainable", "master_weights", "gradients", "optimizer_states"))
    assert states * 1e9 / P8 == pytest.approx(18, abs=1e-3)


def test_adafactor_factors_matrices():
    e = estimate_memory(LLAMA8, replace(FULL, precision="fp32", optimizer="adafactor"))
    assert per_param(e, "optimizer_states", P8) < 0.01


@pytest.mark.parametrize(("quant", "bytes_per_weight"), [("nf4", 0.5625), ("nf4-dq", 0.5 + 1 / 64 + 4 / 16384), ("int8", 1.0)])
def test_qlora_quantizes_block_linears_only(quant, bytes_per_weight):
    arch = get_model_arch("llama-2-7b")
    plain = TrainSettings(method="qlora", quant=quant, lora_targets="qv", lora_rank=8, peft_upcast=False)
    e = estimate_memory(arch, plain)
    linear, rest = 6_476_005_376, arch.params - 6_476_005_376
    assert e.breakdown["weights_frozen"] == pytest.approx((linear * bytes_per_weight + rest * 2) / 1e9, abs=1e-3)
    # PEFT's prepare_model_for_kbit_training casts what is not quantized to fp32
    upcast = estimate_memory(arch, replace(plain, peft_upcast=True))
    assert upcast.breakdown["weights_frozen"] == pytest.approx((linear * bytes_per_weight + rest * 4) / 1e9, abs=1e-3)
    assert e.breakdown["weights_trainable"] == pytest.approx(4_194_304 * 2 / 1e9, abs=1e-3)


def test_lora_in_mixed_precision_keeps_fp32_frozen_weights_and_their_casts():
    e = estimate_memory(LLAMA8, TrainSettings(method="lora", precision="bf16-mixed"))
    assert per_param(e, "weights_frozen", P8) == pytest.approx(4, abs=1e-3)
    assert e.breakdown["autocast_weight_copies"] > 0.9 * 2 * P8 / 1e9


# --- sharding and offload ----------------------------------------------------------------

# Accumulating keeps gradients allocated at every moment, so each state shows in the breakdown.
MIXED_8B = replace(FULL, precision="bf16-mixed", gpus=8, grad_accumulation=2)


@pytest.mark.parametrize(
    ("sharding", "divided"),
    [
        ("none", set()),
        ("ddp", set()),
        ("zero1", {"master_weights", "optimizer_states"}),
        ("zero2", {"master_weights", "optimizer_states", "gradients"}),
        ("zero3", {"master_weights", "optimizer_states", "gradients", "weights_trainable"}),
        # FSDP mixed precision: the fp32 shard is the parameter; 16-bit copies only for gathered units
        ("fsdp", {"master_weights", "optimizer_states", "gradients"}),
    ],
)
def test_sharding_divides_what_its_stage_shards(sharding, divided):
    one = estimate_memory(LLAMA8, replace(MIXED_8B, gpus=1))
    eight = estimate_memory(LLAMA8, replace(MIXED_8B, sharding=sharding))
    for key in ("weights_trainable", "master_weights", "gradients", "optimizer_states"):
        expected = one.breakdown[key] / 8 if key in divided else one.breakdown[key]
        if sharding == "fsdp" and key == "weights_trainable":
            expected = 0.0
        assert eight.breakdown.get(key, 0.0) == pytest.approx(expected, abs=2e-3), key
    assert ("ddp_grad_buckets" in eight.breakdown) == (sharding == "ddp")
    assert eight.breakdown["nccl_buffers"] == 0.5


def test_zero3_and_fsdp_gather_layers_in_forward():
    e = estimate_memory(LLAMA8, replace(MIXED_8B, sharding="fsdp", seq_len=4096, batch_size=4))
    assert e.peak_phase == "forward-backward"
    # the largest unit is the 525M-parameter embedding: 2 units of bf16 weights + its fp32 grads
    assert e.breakdown["zero_gather_buffer"] == pytest.approx(128256 * 4096 * (2 * 2 + 4) / 1e9, abs=1e-3)


def test_sharding_on_one_gpu_changes_nothing_and_says_so():
    plain = estimate_memory(LLAMA8, FULL)
    zero3 = estimate_memory(LLAMA8, replace(FULL, sharding="zero3"))
    assert zero3.breakdown == plain.breakdown
    assert any("one GPU divides nothing" in note for note in zero3.assumptions)


def test_optimizer_offload_moves_states_to_host():
    e = estimate_memory(LLAMA8, replace(MIXED_8B, sharding="zero2", offload="optimizer", grad_accumulation=1))
    assert {"optimizer_states", "master_weights"}.isdisjoint(e.breakdown)
    assert e.host_breakdown == pytest.approx(
        {"optimizer_states": 8 * P8 / 8e9, "master_weights": 4 * P8 / 8e9, "gradients_fp32": 4 * P8 / 8e9}, abs=2e-3
    )
    assert e.host_gb == pytest.approx(sum(e.host_breakdown.values()), abs=2e-3)


def test_parameter_offload_leaves_only_buffers_on_the_gpu():
    e = estimate_memory(LLAMA8, replace(MIXED_8B, sharding="zero3", offload="params"))
    assert {"weights_trainable", "optimizer_states", "master_weights"}.isdisjoint(e.breakdown)
    assert e.host_breakdown["weights"] == pytest.approx(2 * P8 / 8e9, abs=2e-3)


def test_per_gpu_need_for_the_fit_query():
    needs = per_gpu_need(LLAMA8, replace(FULL, sharding="fsdp", seq_len=2048))
    assert list(needs) == [1, 2, 4, 8, 16]
    totals = [e.per_gpu_gb for e in needs.values()]
    assert totals == sorted(totals, reverse=True)
    assert all(e.settings.gpus == n for n, e in needs.items())


# --- phases --------------------------------------------------------------------------------


def test_gradients_are_absent_at_the_activation_peak_unless_accumulating():
    long = replace(FULL, seq_len=8192, batch_size=4, grad_checkpointing=False)
    once = estimate_memory(LLAMA8, long)
    accumulating = estimate_memory(LLAMA8, replace(long, grad_accumulation=4))
    assert once.peak_phase == accumulating.peak_phase == "forward-backward"
    assert "gradients" not in once.breakdown
    assert accumulating.breakdown["gradients"] == pytest.approx(2 * P8 / 1e9, abs=1e-3)


def test_optimizer_in_backward_keeps_one_gradient_at_a_time():
    e = estimate_memory(LLAMA8, replace(FULL, optimizer_in_backward=True))
    assert e.peak_phase == "forward-backward"
    assert e.phases_gb["optimizer-step"] == 0.0
    assert e.breakdown["gradients"] == pytest.approx(128256 * 4096 * 2 / 1e9, abs=1e-3)


def test_breakdown_sums_to_the_total_and_converts_to_torch_metrics():
    e = estimate_memory(LLAMA8, TrainSettings(method="qlora", batch_size=2, seq_len=4096))
    assert sum(e.breakdown.values()) == pytest.approx(e.per_gpu_gb, abs=0.01)
    assert e.per_gpu_gb == max(e.phases_gb.values())
    assert e.torch_reserved_gb() == pytest.approx(e.per_gpu_gb - CUDA_CONTEXT_GB, abs=0.01)
    assert e.torch_allocated_gb() == pytest.approx(e.torch_reserved_gb() - e.breakdown["allocator_margin"], abs=0.01)
    dynamic = e.breakdown["activations"] + e.breakdown["logits_loss"] + e.breakdown["dequant_buffer"]
    assert e.breakdown["allocator_margin"] == pytest.approx(ALLOCATOR_MARGIN * dynamic, abs=0.01)


def test_paged_states_are_on_the_gpu_but_invisible_to_torch_counters():
    e = estimate_memory(LLAMA8, replace(FULL, optimizer="paged-adamw-8bit"))
    plain = estimate_memory(LLAMA8, replace(FULL, optimizer="adamw-8bit"))
    assert e.per_gpu_gb == plain.per_gpu_gb
    assert e.torch_allocated_gb() == pytest.approx(plain.torch_allocated_gb() - e.breakdown["optimizer_states"], abs=0.01)
    assert any("unified memory" in note for note in e.assumptions)


# --- orderings that must hold --------------------------------------------------------------

BASE = TrainSettings(method="lora", batch_size=2, seq_len=2048, grad_checkpointing=False)


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        (replace(BASE, method="qlora"), BASE),
        (BASE, replace(BASE, method="full")),
        (replace(BASE, grad_checkpointing=True), BASE),
        (BASE, replace(BASE, attention="eager")),
        (replace(BASE, cross_entropy="fused"), replace(BASE, cross_entropy="chunked")),
        (replace(BASE, cross_entropy="chunked"), BASE),
        (BASE, replace(BASE, batch_size=4)),
        (BASE, replace(BASE, seq_len=4096)),
        (replace(BASE, lora_targets="qv"), BASE),
        (BASE, replace(BASE, precision="bf16-mixed")),
        (BASE, replace(BASE, lora_dropout=0.1)),
    ],
)
def test_orderings(smaller, larger):
    assert estimate_memory(LLAMA8, smaller).per_gpu_gb < estimate_memory(LLAMA8, larger).per_gpu_gb


def test_moe_activations_follow_active_experts_not_all_experts():
    mixtral = get_model_arch("mixtral-8x7b")
    routed_to_all = replace(mixtral, n_active_experts=mixtral.n_experts - 1)
    few = estimate_memory(mixtral, replace(BASE, method="qlora"))
    many = estimate_memory(routed_to_all, replace(BASE, method="qlora"))
    assert few.breakdown["weights_frozen"] == many.breakdown["weights_frozen"]
    assert many.breakdown["activations"] > 2 * few.breakdown["activations"]


def test_t5_estimate_uses_both_lengths():
    t5 = get_model_arch("flan-t5-base")
    run = TrainSettings(method="full", batch_size=16, seq_len=512, grad_checkpointing=False)
    short = estimate_memory(t5, replace(run, target_len=64))
    long = estimate_memory(t5, replace(run, target_len=512))
    assert short.breakdown["logits_loss"] * 8 == pytest.approx(long.breakdown["logits_loss"], rel=1e-3)
    assert short.per_gpu_gb < long.per_gpu_gb
    assert any("encoder sequences are 512 tokens and decoder sequences 64" in note for note in short.assumptions)


@pytest.mark.parametrize(
    ("settings", "requires"),
    [
        (TrainSettings(method="qlora"), {"bf16": True, "nf4": True, "int8": False}),
        (TrainSettings(method="qlora", quant="int8", precision="fp16-mixed"), {"bf16": False, "nf4": False, "int8": True}),
        (TrainSettings(method="full", precision="bf16-mixed"), {"bf16": True, "nf4": False, "int8": False}),
        (TrainSettings(method="lora", precision="fp32"), {"bf16": False, "nf4": False, "int8": False}),
    ],
)
def test_requirements_for_the_fit_query(settings, requires):
    assert estimate_memory(LLAMA8, settings).requires == requires


# --- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message", "flagged"),
    [
        ({"method": "prefix"}, "method must be one of full, lora, qlora, got 'prefix'", "--method must be one of"),
        ({"precision": "bf16"}, "precision must be one of bf16-mixed, bf16-true, fp16-mixed, fp32", "--precision must be"),
        ({"optimizer": "lion"}, "optimizer must be one of", "--optimizer must be one of"),
        ({"sharding": "zero4"}, "sharding must be one of", "--sharding must be one of"),
        ({"batch_size": 0}, "batch size must be a positive integer, got 0", "--batch must be a positive integer, got 0"),
        ({"seq_len": -5}, "sequence length must be a positive integer, got -5", "--seq-len must be a positive integer, got -5"),
        ({"gpus": 0}, "GPU count must be a positive integer", "--gpus must be a positive integer"),
        ({"lora_rank": 0}, "LoRA rank must be a positive integer", "--lora-rank must be a positive integer"),
        ({"lora_targets": "everything"}, "unknown LoRA target set 'everything'", None),
        ({"lora_targets": ("q", "wqkv")}, "LoRA target(s) wqkv do not exist", None),
        ({"lora_dropout": 1.5}, "LoRA dropout must be in [0, 1)", "--lora-dropout must be in [0, 1)"),
        ({"target_len": 128}, "target length applies only to encoder-decoder models", "--target-len applies only to"),
        ({"offload": "params", "sharding": "zero2"}, "offload params needs sharding zero3 or fsdp",
         "--offload params needs --sharding zero3 or fsdp"),
        ({"optimizer_in_backward": True, "grad_accumulation": 4},
         "optimizer in backward applies each gradient at once, so it needs gradient accumulation 1",
         "--optimizer-in-backward applies each gradient at once, so it needs --grad-accum 1"),
        ({"offload_activations": True, "grad_checkpointing": False},
         "activation offloading is modelled with gradient checkpointing", "--offload-activations is modelled with --grad-checkpointing"),
    ],
)
def test_bad_settings_are_one_line_errors_that_name_the_quantity(changes, message, flagged):
    """The library names what is wrong in words; the command line names its flags (`flagged`)."""
    with pytest.raises(UserInputError) as err:
        estimate_memory(LLAMA8, replace(TrainSettings(), **changes))
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert "--" not in str(err.value)
    assert (flagged in error_line(err.value)) if flagged else error_line(err.value) == str(err.value)


# --- mechanisms added for out-of-sample classes ------------------------------------------


def test_zero3_parameter_offload_keeps_the_live_parameter_budget_gathered():
    """DeepSpeed keeps up to stage3_max_live_parameters (1e9) gathered: 1e9 x 2 bytes in bf16,
    far more than one layer; the model smaller than the budget keeps all of it."""
    s = TrainSettings(method="lora", sharding="zero3", offload="params", gpus=1)
    e = estimate_memory(LLAMA8, s)
    assert e.breakdown["zero_gather_buffer"] == pytest.approx(2.0, abs=0.01)
    small = get_model_arch("qwen2.5-0.5b")
    e_small = estimate_memory(small, s)
    assert e_small.breakdown["zero_gather_buffer"] == pytest.approx(small.params * 2 / 1e9, abs=0.02)
    fsdp = estimate_memory(LLAMA8, replace(s, sharding="fsdp"))
    # FSDP has no live budget: two wrapped units (here the largest, the embedding) in flight
    largest = param_counts(LLAMA8).largest_layer
    assert fsdp.breakdown["zero_gather_buffer"] == pytest.approx(2 * largest * 2 / 1e9, abs=0.02)


def test_every_estimate_carries_a_band_from_the_held_out_evaluation():
    e = estimate_memory(LLAMA8, TrainSettings(method="lora", batch_size=2, seq_len=1024))
    band = e.error_band
    assert band is not None and band["class"] == "lora/single" and band["n"] >= 5
    assert set(band) == {"class", "n", "low", "high", "median_abs", "meaning"}
    assert "leave-one-source-out" in band["meaning"] and "nvidia-smi" in band["meaning"]
    assert e.per_gpu_gb_low == pytest.approx(e.per_gpu_gb / (1 + max(band["high"], 0)), abs=1e-3)
    assert e.per_gpu_gb_high == pytest.approx(e.per_gpu_gb / (1 + min(band["low"], 0)), abs=1e-3)
    assert e.per_gpu_gb_low <= e.per_gpu_gb_high
    out = e.to_dict()
    assert {"per_gpu_gb_low", "per_gpu_gb_high", "error_band", "not_modelled"} <= set(out)


def test_a_class_with_few_points_falls_back_to_its_method_band():
    e = estimate_memory(LLAMA8, TrainSettings(method="full", gpus=8, sharding="zero2"))
    assert e.error_band["class"] == "full"


@pytest.mark.parametrize(
    ("settings", "warned"),
    [
        (TrainSettings(method="lora"), []),
        (TrainSettings(method="full", gpus=8, sharding="fsdp"), ["checkpoint loading"]),
        (TrainSettings(method="lora", sharding="zero3", offload="params"), ["DeepSpeed ZeRO-3 parameter offload"]),
        (TrainSettings(method="full", gpus=8, sharding="fsdp", offload="params", optimizer_in_backward=True),
         ["checkpoint loading", "CPU offload with the optimizer step fused"]),
        (TrainSettings(method="qlora", gpus=2, sharding="fsdp"), ["checkpoint loading", "sharded 4-bit weights"]),
    ],
)
def test_not_modelled_warnings_name_the_class(settings, warned):
    lines = estimate_memory(LLAMA8, settings).not_modelled
    assert [next(w for w in warned if line.startswith(w)) for line in lines] == warned


def test_qlora_states_the_bitsandbytes_version_it_assumes_and_the_legacy_cost():
    s = TrainSettings(method="qlora", lora_targets="qv", batch_size=2, seq_len=512, grad_checkpointing=False)
    e = estimate_memory(LLAMA8, s)
    legacy = estimate_memory(LLAMA8, replace(s, bnb_keeps_4bit_inputs=True))
    delta = legacy.breakdown["activations"] - e.breakdown["activations"]
    note = next(n for n in e.assumptions if n.startswith("bitsandbytes >= 0.43.2 assumed"))
    stated = float(note.split("grow by ")[1].split(" GB")[0])
    assert stated == pytest.approx(delta, abs=0.02)  # the breakdown is rounded per component
    assert delta > 0


def test_compile_recomputes_pointwise_intermediates_by_hand():
    """Same toy layer as the LoRA count above, compiled: each RMSNorm keeps its bf16 input and an fp32
    rstd (2 x (2 x 64 + 4)); q/v's shared input is recomputed; q, k, v (2 x 128) and the attention
    output + lse (2 x 64 + 4 x 4) stay; SwiGLU keeps gate and up (2 x 2 x 128); LoRA keeps its two
    rank-4 intermediates (2 x 2 x 4)."""
    p = ActivationPolicy(act_bytes=2, autocast=False, saved_inputs=frozenset({"q", "v"}), norms_trainable=False,
                         flash=True, lora_rank=4, lora_modules=frozenset({"q", "v"}), compiled=True)
    expected = 2 * (2 * 64 + 4) + 2 * (64 + 32 + 32) + (2 * 64 + 4 * 4) + 2 * 2 * 128 + 2 * 2 * 4
    assert layer_bytes(TOY, p, keys=10) == expected


def test_compile_is_an_option_whose_saving_eager_estimates_state():
    s = TrainSettings(method="full", batch_size=2, seq_len=4096, grad_checkpointing=False, cross_entropy="fused")
    eager, compiled = estimate_memory(LLAMA8, s), estimate_memory(LLAMA8, replace(s, compile=True))
    saving = eager.breakdown["activations"] - compiled.breakdown["activations"]
    assert saving > 0
    note = next(n for n in eager.assumptions if n.startswith("eager mode assumed"))
    assert f"{saving:.2f} GB fewer saved activations" in note
    assert any(n.startswith("torch.compile: norm upcasts") for n in compiled.assumptions)


def test_sharding_engines_cast_parameters_instead_of_autocast():
    """bf16-mixed LoRA of a 70B model over 8 GPUs: plain autocast would keep fp32 frozen weights,
    16-bit copies of them until backward and an fp32 residual stream; FSDP keeps the fp32 shards
    but gathers and computes in bf16; DeepSpeed keeps the module itself in bf16."""
    arch = get_model_arch("llama-2-70b")
    base = TrainSettings(method="lora", precision="bf16-mixed", lora_rank=8, batch_size=8, seq_len=2048, gpus=8)
    fsdp = estimate_memory(arch, replace(base, sharding="fsdp"))
    zero3 = estimate_memory(arch, replace(base, sharding="zero3"))
    assert "autocast_weight_copies" not in fsdp.breakdown and "autocast_weight_copies" not in zero3.breakdown
    assert fsdp.breakdown["weights_frozen"] == pytest.approx(arch.params * 4 / 8 / 1e9, rel=1e-3)
    assert zero3.breakdown["weights_frozen"] == pytest.approx(arch.params * 2 / 8 / 1e9, rel=1e-3)
    # bf16, checkpointed, times the fitted activation overhead
    layer_inputs = FITTED.activation_overhead * 2 * arch.n_layers * 8 * 2048 * arch.hidden_size / 1e9
    assert fsdp.breakdown["activations"] == pytest.approx(layer_inputs, rel=0.03)  # + the final norm
    single = estimate_memory(arch, replace(base, gpus=1, batch_size=1))
    assert "autocast_weight_copies" in single.breakdown  # no engine: autocast casts every forward
