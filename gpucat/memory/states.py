"""Model states on one GPU: weights, master copies, gradients and optimizer states.

Bytes per parameter follow the precision regime (`bf16-mixed` keeps fp32 weights, gradients and
AdamW states plus a 16-bit working copy; `bf16-true` keeps all of them in bf16), the quantized
storage of QLoRA's frozen linears, and the optimizer. Sharding divides them as in the ZeRO paper
(ZeRO-1: optimizer states and master weights; ZeRO-2: + gradients; ZeRO-3 / FSDP FULL_SHARD:
+ parameters, plus gathered layers in flight); offload moves them to host RAM.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucat.memory.archs import ModelArch, ParamCounts, block_linears, lora_targets, param_counts
from gpucat.memory.settings import TrainSettings, peft_upcast_applies

# Quantized storage in bytes per weight, from bitsandbytes' block layouts:
NF4_BYTES = 0.5 + 4 / 64  # 4-bit codes + one fp32 absmax per 64 weights = 4.5 bits
NF4_DQ_BYTES = 0.5 + 1 / 64 + 4 / (64 * 256)  # absmax quantized to 8 bits per 256 blocks = 4.127 bits
INT8_BYTES = 1.0  # LLM.int8 weights; per-row scales are negligible
BNB_8BIT_STATE_BYTES = 1 + 4 / 256  # one state: 1-byte codes + an fp32 absmax per 256-value block
ZERO3_MAX_LIVE_PARAMS = 1e9  # DeepSpeed stage3_max_live_parameters default
QUANT_BYTES = {"nf4": NF4_BYTES, "nf4-dq": NF4_DQ_BYTES, "int8": INT8_BYTES}


def _optimizer_state_bytes(arch: ModelArch, s: TrainSettings, trainable: int, state_bytes: int) -> float:
    """Optimizer states for the trainable parameters."""
    if s.optimizer == "adamw":
        return 2 * state_bytes * trainable
    if s.optimizer in ("adamw-8bit", "paged-adamw-8bit"):
        return 2 * BNB_8BIT_STATE_BYTES * trainable
    if s.optimizer == "sgd":
        return state_bytes * trainable  # momentum buffer
    # Adafactor (transformers' defaults: no first moment): fp32 row and column statistics per
    # matrix, a full fp32 second moment for vectors.
    if s.method == "full":
        counts = param_counts(arch)
        matrix_params = sum(r * c * n for r, c, n in counts.matrices)
        factored = sum((r + c) * n for r, c, n in counts.matrices)
        return 4 * (factored + max(trainable - matrix_params, 0))
    if s.adapter_params is not None:
        return 4 * trainable
    names = set(lora_targets(s.lora_targets))
    r = s.lora_rank
    factored = sum((r + lin.in_features + lin.out_features + r) * lin.count
                   for lin in block_linears(arch) if lin.name in names)
    return 4 * factored


@dataclass
class ModelStates:
    """Model-state bytes on one GPU after sharding and offload, plus what went to the host."""

    weights_frozen: float
    weights_trainable: float
    master_weights: float
    optimizer_states: float
    gradients: float  # all of this GPU's gradients, once the backward pass has produced them
    autocast_weight_copies: float
    ddp_grad_buckets: float
    zero_gather_buffer: float
    grad_bytes: int  # per trainable parameter
    host: dict[str, float]
    gathered_units: int = 0  # layers gathered at once under ZeRO-3 / FSDP or parameter offload (0: none)
    # ZeRO-3 parameter offload: parameters kept gathered when that budget, not the gathered
    # layers, sets `zero_gather_buffer` (0 otherwise).
    resident_params: float = 0.0


def engine_casts_params(s: TrainSettings) -> bool:
    """Mixed precision done by the sharding engine rather than by autocast: FSDP's MixedPrecision
    all-gathers each unit's parameters in the compute dtype, and DeepSpeed's bf16/fp16 mode casts
    the module itself, so the forward runs on 16-bit parameters with a 16-bit residual stream and
    autocast has nothing left to cast."""
    return s.precision in ("bf16-mixed", "fp16-mixed") and s.sharding in ("zero1", "zero2", "zero3", "fsdp")


def model_states(arch: ModelArch, s: TrainSettings, trainable: int) -> ModelStates:
    """The model states of one GPU; `gpucat.memory.notes` says in words what they assume."""
    counts = param_counts(arch)
    n = s.gpus
    mixed = s.precision in ("bf16-mixed", "fp16-mixed")
    compute_bytes = 4 if s.precision == "fp32" else 2
    engine_casts = engine_casts_params(s)
    deepspeed_casts = engine_casts and s.sharding != "fsdp"
    frozen, autocast_copies = _frozen_weights(arch, s, counts)

    # The working copy (fp32 runs: the only copy). Under FSDP mixed precision the fp32 shard is the
    # parameter itself and 16-bit copies exist only for gathered units.
    trainable_weights = 0.0 if engine_casts and not deepspeed_casts else trainable * compute_bytes
    master = trainable * 4.0 if mixed else 0.0
    deepspeed = s.sharding in ("zero1", "zero2", "zero3")
    if deepspeed and s.precision == "fp32":
        # DeepSpeed's ZeRO optimizers build their fp32 partition by cloning the module's partition
        # (`.clone().float().detach()` in stage3.py `_create_fp32_partitions` and in
        # stage_1_and_2.py), so an fp32 run holds its trainable weights twice.
        master = trainable * 4.0
    grad_bytes = 2 if s.precision == "bf16-true" else 4
    grads = float(trainable * grad_bytes)
    states = _optimizer_state_bytes(arch, s, trainable, 2 if s.precision == "bf16-true" else 4)

    sharded = n > 1 and s.sharding not in ("none", "ddp")
    div_states = n if sharded else 1
    div_grads = n if sharded and s.sharding in ("zero2", "zero3", "fsdp") else 1
    div_params = n if sharded and s.sharding in ("zero3", "fsdp") else 1

    st = ModelStates(
        weights_frozen=frozen / div_params, weights_trainable=trainable_weights / div_params,
        master_weights=master / div_states, optimizer_states=states / div_states,
        gradients=grads / div_grads, autocast_weight_copies=autocast_copies / div_params,
        ddp_grad_buckets=grads if s.sharding == "ddp" and n > 1 else 0.0,
        zero_gather_buffer=0.0, grad_bytes=grad_bytes, host={},
    )
    if (sharded and s.sharding in ("zero3", "fsdp")) or s.offload == "params":
        per_param = (frozen + trainable_weights) / max(counts.total, 1)
        if engine_casts and s.method != "qlora":
            per_param = compute_bytes  # units are gathered in the compute dtype
        _gather_layers(st, s, counts, per_param)
    if s.offload in ("optimizer", "params"):
        st.host.update(optimizer_states=st.optimizer_states, master_weights=st.master_weights,
                       gradients_fp32=trainable * 4.0 / div_grads)
        st.optimizer_states = st.master_weights = 0.0
        st.gradients = min(st.gradients, counts.largest_layer * 2.0)  # one layer's reduce bucket
    if s.offload == "params":
        st.host["weights"] = st.weights_frozen + st.weights_trainable
        st.weights_frozen = st.weights_trainable = 0.0
    return st


def _frozen_weights(arch: ModelArch, s: TrainSettings, counts: ParamCounts) -> tuple[float, float]:
    """(frozen weights, their 16-bit autocast copies) before sharding, for LoRA and QLoRA."""
    mixed = s.precision in ("bf16-mixed", "fp16-mixed")
    engine_casts = engine_casts_params(s)
    stored_bytes = 2 if s.precision == "bf16-true" else 4  # parameters as kept between steps
    if engine_casts and s.sharding != "fsdp":
        stored_bytes = 4 if s.precision == "fp32" else 2  # DeepSpeed keeps the module in 16 bits, fp32 masters apart
    lm_head_matrix = arch.vocab_size * arch.hidden_size
    if s.method == "qlora":
        # PEFT's prepare_model_for_kbit_training casts every fp16/bf16 parameter that is not a
        # Params4bit to fp32 (src/peft/utils/other.py, "cast all non INT8 parameters to fp32").
        unquantized_bytes = 4 if peft_upcast_applies(s) else stored_bytes
        frozen = counts.block_linear * QUANT_BYTES[s.quant] + (counts.total - counts.block_linear) * unquantized_bytes
        # only the unquantized output projection goes through autocast's cast
        return frozen, lm_head_matrix * 2 if mixed and not engine_casts else 0.0
    if s.method == "lora":
        frozen = counts.total * stored_bytes
        return frozen, (counts.block_linear + lm_head_matrix) * 2 if mixed and not engine_casts else 0.0
    return 0.0, 0.0


def _gather_layers(st: ModelStates, s: TrainSettings, counts: ParamCounts, per_param: float) -> None:
    """ZeRO-3 / FSDP (or parameter offload): the layers gathered at once, `per_param` bytes each."""
    units = 2 if s.sharding == "fsdp" else 1  # FSDP prefetches the next unit during backward
    st.gathered_units = units
    st.zero_gather_buffer = counts.largest_layer * per_param * units
    if s.method == "full":
        st.zero_gather_buffer += counts.largest_layer * st.grad_bytes  # the unit's unsharded grads
    if s.sharding == "zero3" and s.offload == "params":
        # DeepSpeed releases a gathered parameter only past stage3_max_reuse_distance and keeps up
        # to stage3_max_live_parameters gathered (both 1e9 by default and in transformers'
        # ZeRO-3 template, docs/source/en/deepspeed.md): with parameters offloaded, that
        # budget, not one layer, is what stays on the GPU.
        resident = min(counts.total, ZERO3_MAX_LIVE_PARAMS)
        if resident * per_param > st.zero_gather_buffer:
            st.zero_gather_buffer = resident * per_param
            st.resident_params = resident
