"""The arithmetic of the estimate: peak GPU memory of a fine-tuning run, in bytes, component by
component, with nothing said in words (`gpucat.memory.notes` renders the words from it).

    per GPU = CUDA context (+ NCCL)
            + model states: frozen weights, trainable weights, fp32 master weights, gradients,
              optimizer states (each divided across GPUs as the sharding mode says)
            + the larger of two moments:
                forward/backward: saved activations + max(logits and loss buffers,
                                  one checkpointed layer's recompute) + gather/dequant buffers
                optimizer step:   full gradients + the optimizer's temporaries
            + an allocator margin on the short-lived part

Gradients are freed after each optimizer step (`zero_grad(set_to_none=True)`, PyTorch's default),
so a run without gradient accumulation holds them only from the backward pass to the step; with
accumulation they live through the next forward too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpucat.memory.activations import ActivationEstimate, ActivationPolicy, estimate_activations
from gpucat.memory.archs import ModelArch, ParamCounts, lora_targets, lora_trainable_params, param_counts
from gpucat.memory.settings import TrainSettings, peft_upcast_applies
from gpucat.memory.states import ModelStates, engine_casts_params, model_states

GB = 1e9
# Constants set from the literature, never fitted (bench/memory_calibration.py lists them):
CUDA_CONTEXT_GB = 0.5  # CUDA context + kernels with lazy module loading (PyTorch >= 1.13: ~0.3-0.5 GB)
NCCL_GB = 0.5  # per-process NCCL communicator buffers when more than one GPU (heuristic, unsourced)
FORWARD_BACKWARD, OPTIMIZER_STEP = "forward-backward", "optimizer-step"


@dataclass(frozen=True)
class FittedConstants:
    """The constants fitted to measurements. `bench/memory_calibration.py` refits them without
    each source in turn (leave-one-source-out), so they are passed in rather than read globally."""

    # Caching-allocator fragmentation, as a share of short-lived memory: the value where the median
    # signed error over the calibration set's reserved-memory points is zero
    # (`calibration.fit_allocator_margin`; refit on every held reserved point, rounded).
    allocator_margin: float = 0.12
    # Autograd's short-lived tensors beyond those counted layer by layer (eager RoPE copies, dtype
    # casts, views that keep their base, kernel workspaces), as a factor on saved activations, the
    # recompute transient and the logits: the value where the median signed error over the held
    # points measured without the allocator (allocated, active) is zero
    # (`calibration.fit_activation_overhead`; refit on every such point, rounded).
    activation_overhead: float = 1.18


FITTED = FittedConstants()


@dataclass(frozen=True)
class MemoryBreakdown:
    """Everything the estimate computes, in bytes per GPU, before rounding or wording: the text
    report, the notes and `MemoryEstimate` are all rendered from it."""

    arch: ModelArch
    settings: TrainSettings
    fitted: FittedConstants
    counts: ParamCounts
    trainable: int
    states: ModelStates  # after sharding and offload
    policy: ActivationPolicy  # what the setup implies for the tensors autograd saves
    activations: ActivationEstimate  # with the fitted overhead factor, before activation offload
    host: dict[str, float]  # RAM per GPU process holding offloaded state
    static: dict[str, float]  # live through the whole step: context, weights, optimizer states
    forward_backward: dict[str, float]  # live only at the forward/backward moment
    optimizer_step: dict[str, float]  # live only at the optimizer-step moment
    margins: dict[str, float]  # allocator margin at each moment
    totals: dict[str, float]  # per-GPU total at each moment
    peak_phase: str  # FORWARD_BACKWARD or OPTIMIZER_STEP
    # What the neighbouring configurations would change, for the notes: how many fewer bytes of
    # saved activations torch.compile would keep (None when it is on), and how many more
    # bitsandbytes < 0.43.2 would keep (None unless a QLoRA run on a current version).
    compile_saving: float | None
    old_bitsandbytes_extra: float | None

    @property
    def target_len(self) -> int:
        return self.settings.target_len or self.settings.seq_len

    @property
    def components(self) -> dict[str, float]:
        """What is live at the peak moment, component by component; sums to the per-GPU total."""
        live = self.forward_backward if self.peak_phase == FORWARD_BACKWARD else self.optimizer_step
        return {**self.static, **live, "allocator_margin": self.margins[self.peak_phase]}


def activation_policy(s: TrainSettings) -> ActivationPolicy:
    """Which tensors the run's linears, norms and attention keep for backward."""
    adapted = frozenset() if s.method == "full" else frozenset(lora_targets(s.lora_targets))
    every_linear = frozenset({"q", "k", "v", "o", "gate", "up", "down", "lm_head"})
    saved_inputs = every_linear if s.method == "full" else adapted
    block = {"q", "k", "v", "o", "gate", "up", "down"}
    int8 = s.method == "qlora" and s.quant == "int8"
    if s.method == "qlora" and (s.bnb_keeps_4bit_inputs or int8):
        saved_inputs = saved_inputs | block
    autocast = s.precision in ("bf16-mixed", "fp16-mixed") and not engine_casts_params(s)
    upcast = peft_upcast_applies(s)
    return ActivationPolicy(
        act_bytes=4 if s.precision == "fp32" else 2,
        autocast=autocast or upcast,
        logits_bytes=4 if upcast and not autocast else 0,
        int8_input_bytes=1 if int8 else 0,
        saved_inputs=saved_inputs,
        norms_trainable=s.method == "full",
        flash=s.attention == "flash",
        lora_rank=s.lora_rank if s.method != "full" and s.adapter_params is None else 0,
        lora_modules=adapted,
        lora_dropout=s.lora_dropout > 0,
        compiled=s.compile,
    )


def foreach_step_applies(s: TrainSettings) -> bool:
    """torch AdamW's foreach step on the GPU (not offloaded, not applied inside backward)."""
    return (s.optimizer == "adamw" and s.optimizer_impl == "foreach" and s.offload == "none"
            and not s.optimizer_in_backward)


def _activations(arch: ModelArch, s: TrainSettings) -> ActivationEstimate:
    """Saved activations, the recompute transient and the logits, before the fitted overhead."""
    return estimate_activations(
        arch, activation_policy(s), batch=s.batch_size, seq_len=s.seq_len, target_len=s.target_len or s.seq_len,
        checkpointing=s.grad_checkpointing, cross_entropy=s.cross_entropy,
    )


def trainable_params(arch: ModelArch, s: TrainSettings) -> int:
    if s.method == "full":
        return param_counts(arch).total
    if s.adapter_params is not None:
        return s.adapter_params
    return lora_trainable_params(arch, s.lora_rank, s.lora_targets)


def memory_breakdown(arch: ModelArch, s: TrainSettings, fitted: FittedConstants = FITTED) -> MemoryBreakdown:
    """Peak memory per GPU for fine-tuning `arch` with `s` (checked beforehand: `validate_settings`)."""
    counts = param_counts(arch)
    trainable = trainable_params(arch, s)
    st = model_states(arch, s, trainable)
    acts, compile_saving, old_bnb_extra = _activation_figures(arch, s, fitted.activation_overhead)
    saved, host = acts.saved, dict(st.host)
    if s.offload_activations:
        on_gpu = saved * min(1.0, 2 / (arch.n_layers + arch.n_encoder_layers))
        host["activations"] = saved - on_gpu
        saved = on_gpu
    dequant = counts.largest_linear * (4 if s.precision == "fp32" else 2) if s.method == "qlora" else 0.0
    grads_fb, grads_step, step_temp = _gradients_and_step(arch, s, st, counts, trainable)
    static = {
        "cuda_context": CUDA_CONTEXT_GB * GB,
        "nccl_buffers": NCCL_GB * GB if s.gpus > 1 else 0.0,
        "weights_frozen": st.weights_frozen,
        "weights_trainable": st.weights_trainable,
        "master_weights": st.master_weights,
        "optimizer_states": st.optimizer_states,
        "ddp_grad_buckets": st.ddp_grad_buckets,
    }
    forward_backward = {
        "autocast_weight_copies": st.autocast_weight_copies,
        "gradients": grads_fb,
        "activations": saved,
        "logits_loss": acts.logits if acts.logits >= acts.recompute else 0.0,
        "checkpoint_recompute": acts.recompute if acts.recompute > acts.logits else 0.0,
        "dequant_buffer": dequant,
        "zero_gather_buffer": st.zero_gather_buffer,
    }
    optimizer_step = {"gradients": grads_step, "optimizer_step_temp": step_temp}
    margins = {
        FORWARD_BACKWARD: fitted.allocator_margin * (saved + max(acts.logits, acts.recompute) + dequant + st.zero_gather_buffer),
        OPTIMIZER_STEP: fitted.allocator_margin * step_temp,
    }
    totals = {
        FORWARD_BACKWARD: sum(static.values()) + sum(forward_backward.values()) + margins[FORWARD_BACKWARD],
        OPTIMIZER_STEP: sum(static.values()) + sum(optimizer_step.values()) + margins[OPTIMIZER_STEP],
    }
    fb_peaks = s.optimizer_in_backward or totals[FORWARD_BACKWARD] >= totals[OPTIMIZER_STEP]
    return MemoryBreakdown(
        arch=arch, settings=s, fitted=fitted, counts=counts, trainable=trainable, states=st,
        policy=activation_policy(s), activations=acts, host=host, static=static,
        forward_backward=forward_backward, optimizer_step=optimizer_step, margins=margins, totals=totals,
        peak_phase=FORWARD_BACKWARD if fb_peaks else OPTIMIZER_STEP,
        compile_saving=compile_saving, old_bitsandbytes_extra=old_bnb_extra,
    )


def _activation_figures(arch: ModelArch, s: TrainSettings, k: float) -> tuple[ActivationEstimate, float | None, float | None]:
    """The activations with the fitted overhead factor `k`, and what torch.compile would save and
    bitsandbytes < 0.43.2 would add to them (None where that is not a different configuration)."""
    raw = _activations(arch, s)
    acts = ActivationEstimate(raw.saved * k, raw.recompute * k, raw.logits * k)
    compile_saving = old_bnb_extra = None
    if not s.compile:
        compiled = _activations(arch, replace(s, compile=True))
        compile_saving = acts.saved + acts.recompute - k * (compiled.saved + compiled.recompute)
    if s.method == "qlora" and not s.bnb_keeps_4bit_inputs:
        old_bnb_extra = k * _activations(arch, replace(s, bnb_keeps_4bit_inputs=True)).saved - acts.saved
    return acts, compile_saving, old_bnb_extra


def _gradients_and_step(
    arch: ModelArch, s: TrainSettings, st: ModelStates, counts: ParamCounts, trainable: int
) -> tuple[float, float, float]:
    """(gradients at forward/backward, gradients at the step, the step's temporaries).

    With optimizer-in-backward only the tensor being applied exists; otherwise gradients exist
    from backward to the step, and through the next forward when accumulating. The step's own
    temporaries are one tensor's worth for per-tensor implementations (fused AdamW, bitsandbytes,
    for-loop); PyTorch's foreach AdamW (its default on CUDA, and transformers' `adamw_torch`)
    computes sqrt(exp_avg_sq) for every tensor at once (`torch._foreach_sqrt(device_exp_avg_sqs)`
    in torch/optim/adamw.py): one state-sized temporary.
    """
    largest_tensor = min(trainable, max(counts.largest_linear, arch.vocab_size * arch.hidden_size))
    div_grads = s.gpus if s.gpus > 1 and s.sharding in ("zero2", "zero3", "fsdp") else 1
    if s.optimizer_in_backward:
        grads_fb, grads_step = largest_tensor * st.grad_bytes / div_grads, 0.0
    else:
        grads_fb, grads_step = (st.gradients if s.grad_accumulation > 1 else 0.0), st.gradients
    step_temp = 0.0 if s.offload != "none" else largest_tensor * 4 / div_grads
    if foreach_step_applies(s):
        step_temp = max(step_temp, st.optimizer_states / 2)
    return grads_fb, grads_step, step_temp
