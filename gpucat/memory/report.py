"""Plain-text rendering of an estimate (no colours: easy to read in a terminal and to pipe)."""

from __future__ import annotations

from gpucat.memory.archs import ModelArch, lora_targets
from gpucat.memory.estimator import MemoryEstimate

# One line per component, in the order they are built up; what each holds.
COMPONENTS = {
    "cuda_context": "CUDA context and kernels",
    "nccl_buffers": "NCCL communicator buffers",
    "weights_frozen": "frozen weights",
    "weights_trainable": "trainable weights (16-bit working copy in mixed precision)",
    "master_weights": "fp32 master weights",
    "optimizer_states": "optimizer states",
    "ddp_grad_buckets": "DDP gradient buckets",
    "autocast_weight_copies": "16-bit copies of fp32 frozen weights (autocast)",
    "gradients": "gradients",
    "activations": "saved activations",
    "logits_loss": "logits and cross-entropy buffers",
    "checkpoint_recompute": "one checkpointed layer being recomputed",
    "dequant_buffer": "dequantized weight of one 4-bit layer",
    "zero_gather_buffer": "gathered layers (ZeRO-3 / FSDP)",
    "optimizer_step_temp": "optimizer step temporaries",
    "allocator_margin": "caching-allocator margin",
}


def _billions(n: int) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e8 else f"{n / 1e6:.1f}M"


METRIC_LABELS = {"nvidia-smi": "per GPU", "reserved": "reserved", "allocated": "allocated"}


def format_estimate(arch: ModelArch, e: MemoryEstimate, metric: str = "nvidia-smi") -> str:
    s = e.settings
    method = s.method if s.method != "qlora" else f"qlora ({s.quant})"
    adapter = ""
    if s.method != "full":
        targets = s.lora_targets if isinstance(s.lora_targets, str) else ",".join(lora_targets(s.lora_targets))
        adapter = f", LoRA r{s.lora_rank} on {targets}"
    seq = f"{s.seq_len}" + (f" -> {s.target_len or s.seq_len}" if arch.arch_type == "encoder-decoder" else "")
    gpus = f"{s.gpus} GPU" + ("s" if s.gpus > 1 else "") + (f", {s.sharding}" if s.sharding != "none" else "")
    lines = [
        f"{arch.alias} ({arch.name}): {_billions(e.total_params)} parameters, "
        f"{_billions(e.trainable_params)} trainable",
        f"{method}{adapter}; {s.precision}; {s.optimizer}",
        f"batch {s.batch_size} x {seq} tokens; checkpointing {'on' if s.grad_checkpointing else 'off'}; "
        f"{s.attention} attention; {s.cross_entropy} cross-entropy; {gpus}"
        + (f"; offload {s.offload}" if s.offload != "none" else ""),
        "",
    ]
    width = max(len(k) for k in e.breakdown) if e.breakdown else 10
    for key, gb in e.breakdown.items():
        lines.append(f"  {key:<{width}}  {gb:9.2f} GB  {COMPONENTS.get(key, '')}")
    lines.append(f"  {'per GPU':<{width}}  {e.per_gpu_gb:9.2f} GB  peak at {e.peak_phase.replace('-', '/')}")
    value, low, high = e.in_metric(metric)
    if metric != "nvidia-smi":
        lines.append(f"  {METRIC_LABELS[metric]:<{width}}  {value:9.2f} GB  as torch.cuda.max_memory_{metric} reports it")
    if e.error_band is not None:
        b = e.error_band
        lines.append(f"  {'likely range':<{width}}  {low:.2f} .. {high:.2f} GB  "
                     f"({metric}; held-out error {b['low']:+.0%} .. {b['high']:+.0%} over {b['n']} {b['class']} "
                     "points, widened to hold the estimate)")
    if e.host_gb:
        parts = ", ".join(f"{k} {v:.2f}" for k, v in e.host_breakdown.items())
        lines.append(f"  {'host RAM':<{width}}  {e.host_gb:9.2f} GB  per GPU process ({parts})")
    needs = [name for name, needed in (("bf16 support", e.requires["bf16"]),
                                       ("4-bit NF4 kernels", e.requires["nf4"]),
                                       ("int8 kernels", e.requires["int8"])) if needed]
    lines += ["", "GB = 10^9 bytes." + (f" Needs {', '.join(needs)}." if needs else ""), "Assumptions:"]
    lines += [f"  - {note}" for note in e.assumptions]
    if e.not_modelled:
        lines.append("Not modelled (warning):")
        lines += [f"  - {note}" for note in e.not_modelled]
    return "\n".join(lines)
