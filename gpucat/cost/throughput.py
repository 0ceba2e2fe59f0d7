"""How long a fine-tuning run takes on a configuration: the work per token, and how fast it goes.

Seconds per token on each GPU are the sum of four parts:

- compute: FLOPs per token / (the card's peak dense TFLOPS x a utilization factor);
- dequantization: QLoRA expands its 4-bit weights to bf16 on every pass (memory-bound);
- optimizer: the optimizer step's memory traffic, spread over the tokens of one step;
- communication: the part of data-parallel or sharded traffic that compute does not hide.

The configuration's throughput is its GPU count over those seconds. FLOPs are counted as a
training framework would spend them (see `flops_per_token`). The factors (utilization per GPU
family, the adapter factor, the communication overlap) are fitted on published throughputs
(`data/throughput_points.json`, `bench/cost_calibration.py`) and live in
`data/throughput_factors.json`. Everything here is pure arithmetic over its arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

from gpucat.memory import ModelArch, TrainSettings, lora_trainable_params, param_counts
from gpucat.memory.archs import block_linears

# Causal attention (flash or SDPA) computes about half of the score and value matmuls.
CAUSAL_FRACTION = 1.0
# QLoRA: each 4-bit weight is read (0.5 B) and written back as bf16 (2 B) on every pass.
DEQUANT_BYTES_PER_PARAM = 2.5
# Assumptions for links and hosts with no figure in the catalog; printed with every estimate.
PCIE_GBPS = 25.0  # GB/s one way between a GPU and its host or peer GPUs over PCIe 4.0 x16
HOST_OPTIMIZER_GBPS = 50.0  # GB/s of host memory traffic a CPU optimizer step sustains
DEFAULT_FABRIC_GBITPS = 400.0  # Gbit/s per node when an offer names a fabric but not its speed
FOREACH_ADAMW_PASSES = 21
SCALE_UP = ("nvswitch", "nvlink", "nvlink_bridge", "infinity_fabric", "ici")


@dataclass(frozen=True)
class ModelShape:
    """The sizes the time model needs, for one model under one method."""

    matmul_params: int  # weights each token multiplies through (active experts only), output projection included
    layers: int  # layers with self-attention
    attn_dim: int  # query heads x head dim
    params: int  # all parameters: what a sharded run gathers
    trainable_params: int  # what the optimizer updates
    quantized_params: int = 0  # weights kept in 4-bit and expanded on every pass (QLoRA)


@dataclass(frozen=True)
class Hardware:
    """One configuration: `gpus` cards of one model across `nodes` instances."""

    gpu_model: str
    family: str  # gpu_models.family: the unit of calibration (H100, A100, L40S, RTX 4090, ...)
    architecture: str
    peak_tflops: float  # dense bf16 (fp16 for fp16-mixed) per GPU
    memory_bandwidth_gbps: float | None = None  # GB/s
    nvlink_gbps: float | None = None  # GB/s both ways per GPU (gpu_models.nvlink_gbps)
    gpus: int = 1
    nodes: int = 1
    interconnect: str | None = None
    fabric: str | None = None
    fabric_gbps: float | None = None  # Gbit/s per instance


@dataclass(frozen=True)
class Factors:
    """Fitted factors of the time model (see data/throughput_factors.json)."""

    utilization: dict[str, float]  # fraction of the dense peak a full fine-tune sustains, by GPU family
    adapter: float  # LoRA/QLoRA utilization relative to full fine-tuning
    overlap: float  # fraction of compute time that can hide communication
    families: dict[str, str] = field(default_factory=dict)  # calibrated family -> its architecture
    fitted_on: tuple[str, ...] = ()

    def for_gpu(self, family: str, architecture: str, calibrated: dict[str, str]) -> tuple[float, str | None]:
        """Utilization for a GPU family, and a note when it is borrowed.

        A family with calibration points uses its own factor; otherwise the mean of the
        calibrated families of its architecture (`calibrated`: family -> architecture), else the
        mean of all calibrated families.
        """
        if family in self.utilization:
            return self.utilization[family], None
        kin = [self.utilization[f] for f, arch in calibrated.items() if arch == architecture and f in self.utilization]
        if kin:
            value = sum(kin) / len(kin)
            return value, f"no calibration for {family}: utilization {value:.2f} (mean of calibrated {architecture} cards)"
        value = sum(self.utilization.values()) / len(self.utilization)
        return value, f"no calibration for {family} ({architecture}): utilization {value:.2f} (mean of calibrated cards)"


@dataclass(frozen=True)
class Throughput:
    tokens_per_s: float  # the whole configuration
    tokens_per_s_per_gpu: float
    flops_per_token: float
    utilization: float  # of peak, for the compute part
    scaling_efficiency: float  # throughput per GPU against the same GPU alone
    seconds_per_token: dict[str, float]  # per GPU: compute, dequantization, optimizer, communication
    assumptions: tuple[str, ...] = field(default=())


def model_shape(arch: ModelArch, settings: TrainSettings) -> ModelShape:
    counts = param_counts(arch)
    matmul = arch.vocab_size * arch.hidden_size  # the output projection, tied or not
    for lin in block_linears(arch):
        count = lin.count
        if arch.is_moe and lin.name in ("gate", "up", "down") and arch.moe_intermediate_size in (lin.in_features, lin.out_features):
            count = count * arch.n_active_experts // arch.n_experts  # only the routed experts run
        matmul += lin.in_features * lin.out_features * count
    if settings.method == "full":
        trainable = counts.total
    elif settings.adapter_params is not None:
        trainable = settings.adapter_params
    else:
        trainable = lora_trainable_params(arch, settings.lora_rank, settings.lora_targets)
    return ModelShape(
        matmul_params=matmul,
        layers=arch.n_layers + arch.n_encoder_layers,
        attn_dim=arch.n_heads * arch.head_dim,
        params=counts.total,
        trainable_params=trainable,
        quantized_params=counts.block_linear if settings.method == "qlora" else 0,
    )


def flops_per_token(shape: ModelShape, settings: TrainSettings) -> dict[str, float]:
    """Training FLOPs per token, part by part.

    Forward: 2 per weight (plus adapters) and the attention matmuls over `seq_len` positions.
    Backward: gradients with respect to activations cost a forward's matmuls again; full
    fine-tuning adds the weight gradients (another forward's worth), while LoRA/QLoRA skip them
    for frozen weights but still back-propagate through every layer. Gradient checkpointing
    recomputes one forward.
    """
    adapter = 0 if settings.method == "full" else shape.trainable_params
    attention = 2 * 2 * settings.seq_len * shape.attn_dim * shape.layers * CAUSAL_FRACTION
    forward = 2 * shape.matmul_params + 2 * adapter + attention
    parts = {"forward": forward}
    if settings.method == "full":
        parts["backward"] = 4 * shape.matmul_params + 2 * attention
    else:
        parts["backward"] = 2 * shape.matmul_params + 2 * attention + 4 * adapter
    if settings.grad_checkpointing:
        parts["recompute"] = forward
    return parts


def optimizer_bytes_per_param(settings: TrainSettings) -> float:
    """Memory traffic of one optimizer step per trainable parameter.

    PyTorch's default AdamW (the foreach path in torch/optim/adam.py `_multi_tensor_adam`) runs
    one kernel per operation: about 21 passes over a parameter-sized tensor (lerp, mul, addcmul,
    weight decay, sqrt, div, add, addcdiv). bitsandbytes' 8-bit AdamW is one fused kernel: read
    param, grad and two 1-byte states, write param and states. SGD and Adafactor: a few passes.
    """
    width = 4 if settings.precision in ("bf16-mixed", "fp16-mixed", "fp32") else 2
    if settings.optimizer in ("adamw-8bit", "paged-adamw-8bit"):
        return 3 * width + 4 * 1
    if settings.optimizer == "adamw":
        return FOREACH_ADAMW_PASSES * width
    return 4 * width


def communication_bytes(shape: ModelShape, settings: TrainSettings, gpus: int) -> tuple[float, float]:
    """Bytes each GPU sends per micro-batch, and per optimizer step, for its data parallelism."""
    if gpus <= 1:
        return 0.0, 0.0
    share = (gpus - 1) / gpus
    grad_bytes = 4 if settings.precision in ("bf16-mixed", "fp16-mixed", "fp32") else 2
    if settings.sharding in ("zero3", "fsdp"):
        gathers = 2 + (1 if settings.grad_checkpointing else 0)  # forward, backward, recompute
        per_micro = share * (gathers * 2 * shape.params + grad_bytes * shape.trainable_params)
        return per_micro, 0.0
    return 0.0, 2 * share * grad_bytes * shape.trainable_params  # all-reduce once per step


def link_gbps(hw: Hardware) -> tuple[float, list[str]]:
    """GB/s one way per GPU for collectives: the scale-up link, capped by the node fabric."""
    notes = []
    if hw.interconnect in SCALE_UP and hw.nvlink_gbps:
        bandwidth = hw.nvlink_gbps / 2
    else:
        bandwidth = PCIE_GBPS
        notes.append(f"GPUs talk over PCIe at an assumed {PCIE_GBPS:g} GB/s")
    if hw.nodes > 1:
        gbit = hw.fabric_gbps
        if gbit is None:
            gbit = DEFAULT_FABRIC_GBITPS
            notes.append(f"{hw.fabric or 'fabric'} speed not published: assumed {DEFAULT_FABRIC_GBITPS:g} Gbit/s per node")
        bandwidth = min(bandwidth, gbit / 8)
    return bandwidth, notes


def _seconds_per_token(
    shape: ModelShape, settings: TrainSettings, hw: Hardware, factors: Factors, assumptions: list[str]
) -> tuple[dict[str, float], float]:
    micro_tokens = settings.batch_size * settings.seq_len
    step_tokens = micro_tokens * settings.grad_accumulation
    base, borrowed = factors.for_gpu(hw.family, hw.architecture, factors.families)
    if borrowed:
        assumptions.append(borrowed)
    utilization = base * (factors.adapter if settings.method != "full" else 1.0)
    flops = sum(flops_per_token(shape, settings).values())
    seconds = {"compute": flops / (hw.peak_tflops * 1e12 * utilization)}

    bandwidth = (hw.memory_bandwidth_gbps or 0) * 1e9
    if not bandwidth:
        assumptions.append(f"no memory bandwidth for {hw.gpu_model}: dequantization and optimizer time left out")
    passes = 2 + (1 if settings.grad_checkpointing else 0)
    dequant_bytes = passes * shape.quantized_params * DEQUANT_BYTES_PER_PARAM
    seconds["dequantization"] = dequant_bytes / (bandwidth * micro_tokens) if bandwidth else 0.0

    sharded_states = settings.sharding in ("zero1", "zero2", "zero3", "fsdp")
    trainable_here = shape.trainable_params / (hw.gpus if sharded_states else 1)
    step_bytes = trainable_here * optimizer_bytes_per_param(settings)
    if settings.offload != "none":
        host_seconds = trainable_here * 4 / (PCIE_GBPS * 1e9) + step_bytes / (HOST_OPTIMIZER_GBPS * 1e9)
        seconds["optimizer"] = host_seconds / step_tokens
        assumptions.append(
            f"optimizer step on the host: {PCIE_GBPS:g} GB/s PCIe, {HOST_OPTIMIZER_GBPS:g} GB/s host memory (not calibrated)"
        )
    else:
        seconds["optimizer"] = step_bytes / (bandwidth * step_tokens) if bandwidth else 0.0

    seconds["communication"] = 0.0
    if hw.gpus > 1:
        per_micro, per_step = communication_bytes(shape, settings, hw.gpus)
        link, notes = link_gbps(hw)
        assumptions += notes
        comm = (per_micro / micro_tokens + per_step / step_tokens) / (link * 1e9)
        seconds["communication"] = max(0.0, comm - factors.overlap * seconds["compute"])
    return seconds, utilization


def throughput(shape: ModelShape, settings: TrainSettings, hw: Hardware, factors: Factors) -> Throughput:
    """Sustained training throughput of `hw` for this model and settings."""
    assumptions: list[str] = []
    seconds, utilization = _seconds_per_token(shape, settings, hw, factors, assumptions)
    per_gpu = 1 / sum(seconds.values())
    efficiency = 1.0
    if hw.gpus > 1:
        alone, _ = _seconds_per_token(shape, settings, replace(hw, gpus=1, nodes=1), factors, [])
        efficiency = min(1.0, per_gpu * sum(alone.values()))
    return Throughput(
        tokens_per_s=per_gpu * hw.gpus,
        tokens_per_s_per_gpu=per_gpu,
        flops_per_token=sum(flops_per_token(shape, settings).values()),
        utilization=utilization,
        scaling_efficiency=efficiency,
        seconds_per_token=seconds,
        assumptions=tuple(dict.fromkeys(assumptions)),
    )


def factors_from_dict(data: dict[str, Any]) -> Factors:
    return Factors(
        utilization=dict(data["utilization"]),
        adapter=data["adapter"],
        overlap=data["overlap"],
        families=dict(data.get("families", {})),
        fitted_on=tuple(data.get("fitted_on", ())),
    )


@cache
def load_factors() -> Factors:
    text = resources.files("gpucat.cost").joinpath("data/throughput_factors.json").read_text()
    return factors_from_dict(json.loads(text))
