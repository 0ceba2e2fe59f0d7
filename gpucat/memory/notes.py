"""The estimate's assumptions and warnings in words, rendered from a computed `MemoryBreakdown`.

Nothing here computes memory: each line reads the breakdown (or the settings it was computed
for) and says what the estimate assumed, in the order the parts are built up: model states,
activations, the optimizer step, then the run as a whole.
"""

from __future__ import annotations

from gpucat.memory.archs import ModelArch
from gpucat.memory.breakdown import CUDA_CONTEXT_GB, GB, MemoryBreakdown, foreach_step_applies
from gpucat.memory.settings import TrainSettings, peft_upcast_applies
from gpucat.memory.states import QUANT_BYTES, engine_casts_params


def assumptions(b: MemoryBreakdown) -> list[str]:
    """Every assumption behind the estimate, one line each."""
    return [*state_notes(b), *activation_notes(b), *step_notes(b), *general_notes(b.arch, b.settings, b.peak_phase, b.fitted.allocator_margin)]


def state_notes(b: MemoryBreakdown) -> list[str]:
    """How weights, gradients and optimizer states are stored, sharded and offloaded."""
    s, st = b.settings, b.states
    notes = []
    engine_casts = engine_casts_params(s)
    if s.method == "qlora":
        notes.append(f"frozen block linears stored as {s.quant} ({QUANT_BYTES[s.quant]:.3f} B/param); embeddings, "
                     "norms and the output projection stay unquantized"
                     + (" and are cast to fp32 (PEFT)" if peft_upcast_applies(s) else ""))
    if engine_casts:
        notes.append(f"{s.precision} under {s.sharding}: " + (
            "FSDP keeps fp32 sharded parameters and all-gathers each unit in 16 bits" if s.sharding == "fsdp"
            else "DeepSpeed keeps the module in 16 bits and fp32 master weights for what trains")
            + "; no autocast copies, and a 16-bit residual stream")
    elif s.precision in ("bf16-mixed", "fp16-mixed") and s.method != "full":
        notes.append(f"{s.precision}: frozen weights kept in fp32 and cast to 16 bits for every "
                     "forward (the copies stay alive until backward)")
    if s.sharding in ("zero1", "zero2", "zero3") and s.precision == "fp32":
        notes.append(f"{s.sharding} in fp32: DeepSpeed keeps a cloned fp32 partition of the trainable "
                     "weights next to the module's own")
    if s.sharding not in ("none", "ddp") and s.gpus == 1:
        notes.append(f"--sharding {s.sharding} with one GPU divides nothing")
    if s.sharding == "fsdp":
        notes.append("fsdp = FULL_SHARD: parameters, gradients and optimizer states sharded as in ZeRO-3")
    if st.ddp_grad_buckets:
        notes.append("ddp: gradient buckets hold a second copy of the gradients (PyTorch's default "
                     "gradient_as_bucket_view=False)")
    if st.gathered_units:
        notes.append(f"{s.sharding}: {st.gathered_units} gathered layer(s) of {b.counts.largest_layer / 1e6:.0f}M "
                     "parameters in flight")
    if st.resident_params:
        notes.append(f"zero3 parameter offload: up to {st.resident_params / 1e9:.2f}B "
                     "gathered parameters stay resident (stage3_max_live_parameters)")
    if s.offload in ("optimizer", "params"):
        notes.append("optimizer offload (DeepSpeed ZeRO-Offload style): gradients stream to host "
                     "layer by layer and the optimizer step runs on the CPU")
    if s.optimizer.startswith("paged"):
        notes.append("paged optimizer states sit in CUDA unified memory: counted on the GPU here, "
                     "but bitsandbytes pages them to host RAM rather than failing when the GPU is "
                     "full, and torch.cuda memory counters do not see them")
    return notes


def activation_notes(b: MemoryBreakdown) -> list[str]:
    """Which tensors autograd keeps, and what torch.compile or older bitsandbytes would change."""
    s, p = b.settings, b.policy
    notes = []
    if s.method == "qlora" and s.bnb_keeps_4bit_inputs and not p.int8_input_bytes:
        notes.append("bitsandbytes < 0.43.2: every 4-bit linear keeps its input until backward")
    if p.int8_input_bytes:
        notes.append("int8 (LLM.int8): every int8 linear keeps its 16-bit input and an int8 copy of it "
                     "for backward (bitsandbytes MatMul8bitLt saves CAt, subA and A)")
    if p.logits_bytes == 4:  # PEFT's upcast without autocast: fp32 residual stream and logits
        notes.append("PEFT prepare_model_for_kbit_training: embeddings, norms and output projection in fp32, "
                     "so the residual stream and the logits are fp32 (4-bit linears cast back to their "
                     "input's dtype); --peft-upcast off for LitGPT, torchtune or Answer.AI's FSDP script")
    if b.compile_saving is not None:
        notes.append(f"eager mode assumed; torch.compile (TrainSettings.compile) recomputes pointwise "
                     f"intermediates in backward: {b.compile_saving / GB:.2f} GB fewer saved activations here")
    else:
        notes.append("torch.compile: norm upcasts and outputs, SwiGLU activation and product recomputed in "
                     "backward; matmul outputs and attention inputs/outputs kept")
    if b.old_bitsandbytes_extra is not None:
        notes.append(f"bitsandbytes >= 0.43.2 assumed: 4-bit linears keep no input of their own; with older "
                     f"versions saved activations grow by {b.old_bitsandbytes_extra / GB:.2f} GB "
                     "(--bitsandbytes old)")
    if s.offload_activations:
        notes.append("activation offloading: checkpointed layer inputs stream to host; two layers stay on the GPU")
    return notes


def step_notes(b: MemoryBreakdown) -> list[str]:
    """Where gradients end, and when the loss's buffers dominate."""
    s, notes = b.settings, []
    if s.optimizer_in_backward:
        notes.append("optimizer step fused into backward: each gradient is freed as soon as it is applied")
    if s.cross_entropy == "standard" and b.activations.logits > 0.25 * max(b.totals.values()):
        notes.append("the standard loss's fp32 logits buffers are a large share here; --cross-entropy "
                     "chunked or fused (Liger, Cut Cross-Entropy) shrinks them")
    return notes


def general_notes(arch: ModelArch, s: TrainSettings, phase: str, margin_rate: float) -> list[str]:
    """The run as a whole: the peak moment, the precision regime, sequence lengths, the optimizer."""
    notes = [
        f"peak at the {phase.replace('-', '/')} moment; GB = 10^9 bytes; CUDA context "
        f"{CUDA_CONTEXT_GB} GB; allocator margin {margin_rate:.0%} of short-lived memory",
        {"bf16-mixed": "bf16-mixed: fp32 parameters and gradients, AdamW states in fp32, bf16 autocast compute",
         "fp16-mixed": "fp16-mixed: fp32 parameters and gradients, AdamW states in fp32, fp16 autocast compute",
         "bf16-true": "bf16-true: parameters, gradients, optimizer states and activations all in bf16",
         "fp32": "fp32: everything in 32-bit floats"}[s.precision],
    ]
    if arch.arch_type == "encoder-decoder":
        notes.append(f"encoder sequences are {s.seq_len} tokens and decoder sequences {s.target_len or s.seq_len} "
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
