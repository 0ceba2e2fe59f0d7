"""Peak GPU memory of a fine-tuning run, component by component.

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
accumulation they live through the next forward too. The breakdown lists what is live at the
peak moment and sums to `per_gpu_gb`; `phases_gb` gives both moments.

Units: bytes internally, GB (10^9 bytes) in `MemoryEstimate`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from gpucat.memory.activations import ActivationEstimate, ActivationPolicy, estimate_activations
from gpucat.memory.archs import ModelArch, lora_targets, lora_trainable_params, param_counts
from gpucat.memory.bands import band_gb, error_band
from gpucat.memory.settings import TrainSettings, peft_upcast_applies, validate_settings
from gpucat.memory.states import engine_casts_params, model_states

GB = 1e9
# Constants set from the literature, never fitted (bench/memory_calibration.py lists them):
CUDA_CONTEXT_GB = 0.5  # CUDA context + kernels with lazy module loading (PyTorch >= 1.13: ~0.3-0.5 GB)
NCCL_GB = 0.5  # per-process NCCL communicator buffers when more than one GPU (heuristic, unsourced)


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
ALLOCATOR_MARGIN = FITTED.allocator_margin


@dataclass(frozen=True)
class MemoryEstimate:
    model: str
    settings: TrainSettings
    total_params: int
    trainable_params: int
    per_gpu_gb: float  # what must fit on each GPU (nvidia-smi view), GB = 1e9 bytes
    breakdown: dict[str, float]  # component -> GB, live at the peak; sums to per_gpu_gb
    peak_phase: str  # "forward-backward" or "optimizer-step"
    phases_gb: dict[str, float]  # per-GPU total at each of the two moments
    host_gb: float  # host RAM per GPU process holding offloaded state
    host_breakdown: dict[str, float]
    requires: dict[str, bool]  # hardware/kernel needs: bf16 support, NF4 / int8 kernels
    assumptions: list[str] = field(default_factory=list)
    # The measured peak is likely within [low, high] (gpucat.memory.bands.band_gb): the estimate
    # divided by (1 + the 90th and 10th percentile of the leave-one-source-out signed error of its
    # method/sharding class), widened to contain the estimate: low <= per_gpu_gb <= high.
    per_gpu_gb_low: float | None = None
    per_gpu_gb_high: float | None = None
    error_band: dict | None = None
    # Mechanisms this configuration touches that the estimate does not model; the CLI prints them.
    not_modelled: list[str] = field(default_factory=list)

    def torch_allocated_gb(self) -> float:
        """The estimate as `torch.cuda.max_memory_allocated` would report it: no context, no
        allocator margin, and no paged optimizer states (they live outside PyTorch's allocator)."""
        skip = {"cuda_context", "nccl_buffers", "allocator_margin"}
        paged = self.breakdown.get("optimizer_states", 0.0) if self.settings.optimizer.startswith("paged") else 0.0
        return sum(v for k, v in self.breakdown.items() if k not in skip) - paged

    def torch_reserved_gb(self) -> float:
        """The estimate as `torch.cuda.max_memory_reserved` would report it."""
        return self.torch_allocated_gb() + self.breakdown.get("allocator_margin", 0.0)

    def metrics_gb(self) -> dict[str, float]:
        """The estimate in each metric a measurement may use: nvidia-smi (everything: what must fit),
        reserved (`torch.cuda.max_memory_reserved`) and allocated (`max_memory_allocated`)."""
        return {"nvidia-smi": self.per_gpu_gb, "reserved": round(self.torch_reserved_gb(), 3),
                "allocated": round(self.torch_allocated_gb(), 3)}

    def in_metric(self, metric: str) -> tuple[float, float | None, float | None]:
        """(estimate, band low, band high) in one metric; the band keeps its relative width."""
        value = self.metrics_gb()[metric]
        scale = value / self.per_gpu_gb if self.per_gpu_gb else 1.0
        low = None if self.per_gpu_gb_low is None else round(self.per_gpu_gb_low * scale, 3)
        high = None if self.per_gpu_gb_high is None else round(self.per_gpu_gb_high * scale, 3)
        return value, low, high

    def to_dict(self) -> dict:
        out = asdict(self)
        out["metrics_gb"] = self.metrics_gb()
        settings = out["settings"]
        settings["lora_targets"] = list(lora_targets(self.settings.lora_targets))
        # Options that do not apply to the method are shown as null, not as their defaults.
        if self.settings.method != "qlora":
            settings["quant"] = None
        if self.settings.method == "full":
            settings.update(lora_rank=None, lora_targets=None, lora_dropout=None)
        return out


def _activation_policy(s: TrainSettings, notes: list[str]) -> ActivationPolicy:
    adapted = frozenset() if s.method == "full" else frozenset(lora_targets(s.lora_targets))
    every_linear = frozenset({"q", "k", "v", "o", "gate", "up", "down", "lm_head"})
    saved_inputs = every_linear if s.method == "full" else adapted
    block = {"q", "k", "v", "o", "gate", "up", "down"}
    int8 = s.method == "qlora" and s.quant == "int8"
    if s.method == "qlora" and s.bnb_keeps_4bit_inputs and not int8:
        saved_inputs = saved_inputs | block
        notes.append("bitsandbytes < 0.43.2: every 4-bit linear keeps its input until backward")
    if int8:
        saved_inputs = saved_inputs | block
        notes.append("int8 (LLM.int8): every int8 linear keeps its 16-bit input and an int8 copy of it "
                     "for backward (bitsandbytes MatMul8bitLt saves CAt, subA and A)")
    autocast = s.precision in ("bf16-mixed", "fp16-mixed") and not engine_casts_params(s)
    upcast = peft_upcast_applies(s)
    if upcast and not autocast:
        notes.append("PEFT prepare_model_for_kbit_training: embeddings, norms and output projection in fp32, "
                     "so the residual stream and the logits are fp32 (4-bit linears cast back to their "
                     "input's dtype); --peft-upcast off for LitGPT, torchtune or Answer.AI's FSDP script")
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


def estimate_memory(
    arch: ModelArch, settings: TrainSettings, fitted: FittedConstants = FITTED, *, with_band: bool = True
) -> MemoryEstimate:
    """Peak memory per GPU for fine-tuning `arch` with `settings`, with its breakdown and error band."""
    s = settings
    validate_settings(arch, s)
    margin_rate = fitted.allocator_margin
    notes: list[str] = []
    counts = param_counts(arch)
    if s.method == "full":
        trainable = counts.total
    elif s.adapter_params is not None:
        trainable = s.adapter_params
    else:
        trainable = lora_trainable_params(arch, s.lora_rank, s.lora_targets)
    st = model_states(arch, s, trainable, notes)

    target_len = s.target_len or s.seq_len
    acts = estimate_activations(
        arch, _activation_policy(s, notes), batch=s.batch_size, seq_len=s.seq_len,
        target_len=target_len, checkpointing=s.grad_checkpointing, cross_entropy=s.cross_entropy,
    )
    k = fitted.activation_overhead
    acts = ActivationEstimate(acts.saved * k, acts.recompute * k, acts.logits * k)
    saved = acts.saved
    if not s.compile:
        compiled = estimate_activations(
            arch, _activation_policy(replace(s, compile=True), []), batch=s.batch_size, seq_len=s.seq_len,
            target_len=target_len, checkpointing=s.grad_checkpointing, cross_entropy=s.cross_entropy,
        )
        saving = acts.saved + acts.recompute - k * (compiled.saved + compiled.recompute)
        notes.append(f"eager mode assumed; torch.compile (TrainSettings.compile) recomputes pointwise "
                     f"intermediates in backward: {saving / GB:.2f} GB fewer saved activations here")
    else:
        notes.append("torch.compile: norm upcasts and outputs, SwiGLU activation and product recomputed in "
                     "backward; matmul outputs and attention inputs/outputs kept")
    if s.method == "qlora" and not s.bnb_keeps_4bit_inputs:
        legacy = estimate_activations(
            arch, _activation_policy(replace(s, bnb_keeps_4bit_inputs=True), []), batch=s.batch_size,
            seq_len=s.seq_len, target_len=target_len, checkpointing=s.grad_checkpointing,
            cross_entropy=s.cross_entropy,
        )
        notes.append(f"bitsandbytes >= 0.43.2 assumed: 4-bit linears keep no input of their own; with older "
                     f"versions saved activations grow by {(k * legacy.saved - acts.saved) / GB:.2f} GB "
                     "(--bitsandbytes old)")
    if s.offload_activations:
        on_gpu = saved * min(1.0, 2 / (arch.n_layers + arch.n_encoder_layers))
        st.host["activations"] = saved - on_gpu
        saved = on_gpu
        notes.append("activation offloading: checkpointed layer inputs stream to host; two layers stay on the GPU")
    dequant = counts.largest_linear * (4 if s.precision == "fp32" else 2) if s.method == "qlora" else 0.0

    # Gradients: with optimizer-in-backward only the tensor being applied exists; otherwise they
    # exist from backward to the step, and through the next forward when accumulating.
    largest_tensor = min(trainable, max(counts.largest_linear, arch.vocab_size * arch.hidden_size))
    div_grads = s.gpus if s.gpus > 1 and s.sharding in ("zero2", "zero3", "fsdp") else 1
    if s.optimizer_in_backward:
        grads_fb, grads_step = largest_tensor * st.grad_bytes / div_grads, 0.0
        notes.append("optimizer step fused into backward: each gradient is freed as soon as it is applied")
    else:
        grads_fb, grads_step = (st.gradients if s.grad_accumulation > 1 else 0.0), st.gradients

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
    # The step's own temporaries: one tensor's worth for per-tensor implementations (fused AdamW,
    # bitsandbytes, for-loop). PyTorch's foreach AdamW (its default on CUDA, and transformers'
    # `adamw_torch`) computes sqrt(exp_avg_sq) for every tensor at once
    # (`torch._foreach_sqrt(device_exp_avg_sqs)` in torch/optim/adamw.py): one state-sized temporary.
    step_temp = 0.0 if s.offload != "none" else largest_tensor * 4 / div_grads
    if foreach_step_applies(s):
        step_temp = max(step_temp, st.optimizer_states / 2)
    optimizer_step = {"gradients": grads_step, "optimizer_step_temp": step_temp}
    margin_fb = margin_rate * (saved + max(acts.logits, acts.recompute) + dequant + st.zero_gather_buffer)
    margin_step = margin_rate * step_temp
    fb_total = sum(static.values()) + sum(forward_backward.values()) + margin_fb
    step_total = sum(static.values()) + sum(optimizer_step.values()) + margin_step
    if s.optimizer_in_backward or fb_total >= step_total:
        phase, live, margin = "forward-backward", forward_backward, margin_fb
    else:
        phase, live, margin = "optimizer-step", optimizer_step, margin_step
    breakdown_bytes = {**static, **live, "allocator_margin": margin}

    if s.cross_entropy == "standard" and acts.logits > 0.25 * max(fb_total, step_total):
        notes.append("the standard loss's fp32 logits buffers are a large share here; --cross-entropy "
                     "chunked or fused (Liger, Cut Cross-Entropy) shrinks them")
    notes += _general_notes(arch, s, phase, target_len, margin_rate)
    per_gpu_gb = round(sum(breakdown_bytes.values()) / GB, 3)
    band = error_band(s) if with_band else None
    return MemoryEstimate(
        model=arch.name,
        settings=s,
        total_params=counts.total,
        trainable_params=trainable,
        per_gpu_gb=per_gpu_gb,
        breakdown={k: round(v / GB, 3) for k, v in breakdown_bytes.items() if v > 0},
        peak_phase=phase,
        phases_gb={"forward-backward": round(fb_total / GB, 3),
                   "optimizer-step": 0.0 if s.optimizer_in_backward else round(step_total / GB, 3)},
        host_gb=round(sum(st.host.values()) / GB, 3),
        host_breakdown={k: round(v / GB, 3) for k, v in st.host.items() if v > 0},
        requires={"bf16": s.precision.startswith("bf16"),
                  "nf4": s.method == "qlora" and s.quant.startswith("nf4"),
                  "int8": s.method == "qlora" and s.quant == "int8"},
        assumptions=notes,
        per_gpu_gb_low=None if band is None else round(band_gb(per_gpu_gb, band)[0], 3),
        per_gpu_gb_high=None if band is None else round(band_gb(per_gpu_gb, band)[1], 3),
        error_band=band,
        not_modelled=not_modelled(arch, s),
    )


def foreach_step_applies(s: TrainSettings) -> bool:
    """torch AdamW's foreach step on the GPU (not offloaded, not applied inside backward)."""
    return (s.optimizer == "adamw" and s.optimizer_impl == "foreach" and s.offload == "none"
            and not s.optimizer_in_backward)


def _general_notes(arch: ModelArch, s: TrainSettings, phase: str, target_len: int, margin_rate: float) -> list[str]:
    notes = [
        f"peak at the {phase.replace('-', '/')} moment; GB = 10^9 bytes; CUDA context "
        f"{CUDA_CONTEXT_GB} GB; allocator margin {margin_rate:.0%} of short-lived memory",
        {"bf16-mixed": "bf16-mixed: fp32 parameters and gradients, AdamW states in fp32, bf16 autocast compute",
         "fp16-mixed": "fp16-mixed: fp32 parameters and gradients, AdamW states in fp32, fp16 autocast compute",
         "bf16-true": "bf16-true: parameters, gradients, optimizer states and activations all in bf16",
         "fp32": "fp32: everything in 32-bit floats"}[s.precision],
    ]
    if arch.arch_type == "encoder-decoder":
        notes.append(f"encoder sequences are {s.seq_len} tokens and decoder sequences {target_len} "
                     "(packed, or padded to the longest sample in the batch)")
    else:
        notes.append(f"every sequence is {s.seq_len} tokens (packed, or padded to the longest sample in the batch); "
                     "with lengths that vary from batch to batch the allocator's reserve can grow past the fitted "
                     "margin through fragmentation")
    if s.grad_accumulation > 1:
        notes.append("gradient accumulation keeps gradients alive through the next forward pass")
    if s.attention == "flash" and s.precision == "fp32":
        notes.append("fp32 has no FlashAttention kernel; PyTorch SDPA's memory-efficient kernel keeps "
                     "the same linear memory")
    if arch.arch_type == "encoder-decoder" and s.attention == "flash":
        notes.append("T5's relative-position bias needs an additive bias, so 'flash' means SDPA's "
                     "memory-efficient kernel")
    if arch.arch_type == "encoder":
        notes.append("encoder-only model: a classification head is assumed, so logits are negligible")
    if arch.is_moe:
        notes.append(f"MoE: all {arch.n_experts} experts resident; each token's activations through "
                     f"{arch.n_active_experts} experts (even routing assumed)")
    if s.optimizer == "adafactor":
        notes.append("adafactor: factored second moment, no first moment (transformers' default)")
    if s.optimizer == "sgd":
        notes.append("sgd: one momentum buffer per parameter")
    if foreach_step_applies(s):
        notes.append("adamw foreach (PyTorch's default): the step holds one state-sized temporary "
                     "(sqrt of the second moment for every tensor); --optimizer-impl fused or per-tensor "
                     "holds one tensor's worth")
    elif s.optimizer == "adamw" and s.offload == "none" and not s.optimizer_in_backward:
        notes.append(f"adamw {s.optimizer_impl}: the step's temporaries are one tensor's worth")
    if s.method == "qlora" and s.sharding in ("zero3", "fsdp") and s.gpus > 1:
        notes.append("sharding 4-bit weights needs bnb_4bit_quant_storage set to the compute dtype (FSDP-QLoRA)")
    return notes


def not_modelled(arch: ModelArch, s: TrainSettings) -> list[str]:
    """Mechanisms that can set this run's peak and that the estimate leaves out, one line each."""
    out = []
    if s.gpus > 1 and s.sharding in ("zero3", "fsdp"):
        out.append("checkpoint loading: toolchains that load the full state dict on every rank (LitGPT's "
                   "FSDP load, FULL_STATE_DICT saves) peak at the whole 16-bit model plus the rank's shard "
                   "while loading or saving; that peak is not modelled")
    if s.offload == "params" and s.sharding == "zero3":
        out.append("DeepSpeed ZeRO-3 parameter offload: which gathered parameters stay resident depends "
                   "on module order and reuse; modelled as stage3_max_live_parameters (1e9) gathered at "
                   "once, and measured peaks have run up to 2-4x that")
    if s.offload != "none" and s.optimizer_in_backward:
        out.append("CPU offload with the optimizer step fused into backward: the overlap of gradient "
                   "transfers with the step is not modelled")
    if s.method == "qlora" and s.sharding in ("zero3", "fsdp") and s.gpus > 1:
        out.append("sharded 4-bit weights: how bitsandbytes' quantization state (kept as metadata, not a "
                   "sharded parameter) is gathered with each unit is not modelled")
    if s.method == "qlora" and s.quant == "int8":
        out.append("int8 (LLM.int8): the per-batch int8 copies and layout transforms of each input, the outlier "
                   "columns kept in 16 bits and, in older bitsandbytes, the Turing/Ampere weight layouts are not "
                   "modelled beyond one int8 copy per input")
    if arch.vocab_size >= 150_000 and arch.arch_type != "encoder" and s.cross_entropy == "standard":
        per_copy = 4 * s.batch_size * (s.target_len or s.seq_len) * arch.vocab_size / GB
        out.append(f"large vocabulary ({arch.vocab_size:,}): a model's own (remote-code) loss can keep several more "
                   f"fp32 copies of the logits ({per_copy:.2f} GB each) than the standard loss modelled here")
    return out


def per_gpu_need(
    arch: ModelArch, settings: TrainSettings, gpu_counts: tuple[int, ...] = (1, 2, 4, 8, 16)
) -> dict[int, MemoryEstimate]:
    """The estimate for each GPU count, same settings otherwise (for the `fit` query)."""
    return {count: estimate_memory(arch, replace(settings, gpus=count)) for count in gpu_counts}
