"""Training settings: what a fine-tuning run looks like, and which combinations make sense.

`TrainSettings` is a frozen dataclass shared by `gpucat memory` and `gpucat fit`; its defaults are
a single-GPU bf16 LoRA run. `validate_settings` turns a bad value or an impossible combination
into one `SettingError` line that names the setting by its quantity ("sequence length"); the
command line re-spells it as its flag (`--seq-len`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpucat.memory.archs import ModelArch, block_linears, lora_targets
from gpucat.schemas.errors import Quantity, SettingError, UserInputError

Method = Literal["full", "lora", "qlora"]
Precision = Literal["bf16-mixed", "bf16-true", "fp16-mixed", "fp32"]
Optimizer = Literal["adamw", "adamw-8bit", "paged-adamw-8bit", "sgd", "adafactor"]
Sharding = Literal["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]
Offload = Literal["none", "optimizer", "params"]
Attention = Literal["flash", "eager"]
CrossEntropy = Literal["standard", "chunked", "fused"]
Quant = Literal["nf4", "nf4-dq", "int8"]
OptimizerImpl = Literal["foreach", "fused", "per-tensor"]
Bitsandbytes = Literal["current", "old"]

METHODS: tuple[Method, ...] = ("full", "lora", "qlora")
PRECISIONS: tuple[Precision, ...] = ("bf16-mixed", "bf16-true", "fp16-mixed", "fp32")
OPTIMIZERS: tuple[Optimizer, ...] = ("adamw", "adamw-8bit", "paged-adamw-8bit", "sgd", "adafactor")
SHARDINGS: tuple[Sharding, ...] = ("none", "ddp", "zero1", "zero2", "zero3", "fsdp")
OFFLOADS: tuple[Offload, ...] = ("none", "optimizer", "params")
ATTENTIONS: tuple[Attention, ...] = ("flash", "eager")
CROSS_ENTROPIES: tuple[CrossEntropy, ...] = ("standard", "chunked", "fused")
QUANTS: tuple[Quant, ...] = ("nf4", "nf4-dq", "int8")
OPTIMIZER_IMPLS: tuple[OptimizerImpl, ...] = ("foreach", "fused", "per-tensor")
BITSANDBYTES: tuple[Bitsandbytes, ...] = ("current", "old")


@dataclass(frozen=True)
class TrainSettings:
    """One fine-tuning configuration. Defaults are a single-GPU bf16 LoRA run."""

    method: Method = "lora"
    precision: Precision = "bf16-true"
    optimizer: Optimizer = "adamw"
    # How torch's AdamW runs its step: "foreach" (PyTorch's default on CUDA, and transformers'
    # `adamw_torch`) holds one state-sized temporary; "fused" and "per-tensor" one tensor's worth.
    optimizer_impl: OptimizerImpl = "foreach"
    lora_rank: int = 16
    lora_targets: str | tuple[str, ...] = "all-linear"  # preset or module names (+ "lm_head")
    lora_dropout: float = 0.0
    quant: Quant = "nf4-dq"  # storage of the frozen linears for method "qlora"
    batch_size: int = 1  # micro-batch per GPU
    seq_len: int = 2048  # tokens per sequence of the longest batch (padded or packed length)
    target_len: int | None = None  # decoder length of an encoder-decoder (default: seq_len)
    grad_checkpointing: bool = True
    attention: Attention = "flash"
    cross_entropy: CrossEntropy = "standard"
    grad_accumulation: int = 1  # micro-batches per optimizer step (>1 keeps gradients through forward)
    gpus: int = 1
    sharding: Sharding = "none"
    offload: Offload = "none"
    offload_activations: bool = False  # torchtune-style offloading of saved activations to host
    optimizer_in_backward: bool = False  # step each parameter during backward and free its grad
    compile: bool = False  # torch.compile of the layers (torchtune's `compile: True`): eager by default
    adapter_params: int | None = None  # trainable count of a non-LoRA adapter (IA3, prompt tuning)
    # bitsandbytes before 0.43.2 kept every 4-bit linear's input alive for backward (fixed in
    # bitsandbytes PR #1270); set for runs on those versions.
    bnb_keeps_4bit_inputs: bool = False
    # QLoRA through PEFT's prepare_model_for_kbit_training: every non-quantized 16-bit parameter
    # (embeddings, output projection, norms) is cast to fp32, so without autocast the residual
    # stream and the logits are fp32 too. LitGPT, torchtune and Answer.AI's FSDP script do not.
    peft_upcast: bool = True


def peft_upcast_applies(s: TrainSettings) -> bool:
    """PEFT's fp32 upcast of the non-quantized parameters, for a QLoRA run that uses it. TRL skips
    prepare_model_for_kbit_training for sharded QLoRA (FSDP / ZeRO-3: `is_qlora and not
    is_sharded_qlora` in trl/models/utils.py), so sharded runs keep those parameters in 16 bits."""
    sharded = s.gpus > 1 and s.sharding in ("zero3", "fsdp")
    return s.method == "qlora" and s.peft_upcast and s.precision in ("bf16-true",) and not sharded


# How error messages name each setting (and each option of `TrainingRequest` and the fit query);
# an interface maps the keys to its own names (the command line to its flags).
WORDS = {
    "method": "method", "precision": "precision", "optimizer": "optimizer", "optimizer_impl": "optimizer implementation",
    "sharding": "sharding", "offload": "offload", "attention": "attention", "cross_entropy": "cross-entropy",
    "quant": "quantization", "batch_size": "batch size", "batch": "batch size", "seq_len": "sequence length",
    "target_len": "target length", "gpus": "GPU count", "grad_accumulation": "gradient accumulation",
    "grad_accum": "gradient accumulation", "lora_rank": "LoRA rank", "lora_targets": "LoRA targets",
    "lora_dropout": "LoRA dropout", "grad_checkpointing": "gradient checkpointing",
    "offload_activations": "activation offloading", "optimizer_in_backward": "optimizer in backward",
    "peft_upcast": "PEFT upcast", "bitsandbytes": "bitsandbytes version", "model": "model", "config": "config",
    "max_gpus": "maximum GPU count", "headroom": "headroom", "risk": "risk",
}  # fmt: skip


def quantity(key: str) -> Quantity:
    """The setting `key` as an error message names it."""
    return Quantity(key, WORDS[key])


def validate_settings(arch: ModelArch, s: TrainSettings) -> None:
    """Raise `SettingError` (one line, a `UserInputError`) for a bad value or an impossible combination."""
    choices = {
        "method": METHODS, "precision": PRECISIONS, "optimizer": OPTIMIZERS, "sharding": SHARDINGS,
        "offload": OFFLOADS, "attention": ATTENTIONS, "cross_entropy": CROSS_ENTROPIES, "quant": QUANTS,
        "optimizer_impl": OPTIMIZER_IMPLS,
    }
    for name, allowed in choices.items():
        value = getattr(s, name)
        if value not in allowed:
            raise SettingError("{q} must be one of {allowed}, got {value!r}", q=quantity(name), allowed=", ".join(allowed), value=value)
    for name in ("batch_size", "seq_len", "gpus", "grad_accumulation", "lora_rank"):
        value = getattr(s, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SettingError("{q} must be a positive integer, got {value!r}", q=quantity(name), value=value)
    if s.target_len is not None:
        if arch.arch_type != "encoder-decoder":
            raise SettingError("{q} applies only to encoder-decoder models (T5, mT5)", q=quantity("target_len"))
        if s.target_len < 1:
            raise SettingError("{q} must be a positive integer, got {value}", q=quantity("target_len"), value=s.target_len)
    if not 0 <= s.lora_dropout < 1:
        raise SettingError("{q} must be in [0, 1), got {value}", q=quantity("lora_dropout"), value=s.lora_dropout)
    if s.adapter_params is not None and (s.method == "full" or s.adapter_params < 0):
        raise UserInputError("adapter_params applies to lora/qlora and must be >= 0")
    if s.offload == "params" and s.sharding not in ("zero3", "fsdp"):
        raise SettingError("{offload} params needs {sharding} zero3 or fsdp (parameters are offloaded per shard)",
                           offload=quantity("offload"), sharding=quantity("sharding"))
    if s.optimizer_in_backward and s.grad_accumulation > 1:
        raise SettingError("{oib} applies each gradient at once, so it needs {accum} 1",
                           oib=quantity("optimizer_in_backward"), accum=quantity("grad_accumulation"))
    if s.offload_activations and not s.grad_checkpointing:
        raise SettingError("{offload} is modelled with {checkpointing} (as torchtune runs it)",
                           offload=quantity("offload_activations"), checkpointing=quantity("grad_checkpointing"))
    if s.method != "full" and not isinstance(s.lora_targets, str):
        unknown = set(s.lora_targets) - {lin.name for lin in block_linears(arch)} - {"lm_head"}
        if unknown:
            raise UserInputError(f"LoRA target(s) {', '.join(sorted(unknown))} do not exist in {arch.name}")
    elif s.method != "full":
        lora_targets(s.lora_targets)  # an unknown preset name raises
