"""How long a fine-tuning run takes on a configuration: the work per token, and how fast it goes.

Seconds per token on each GPU are the sum of these parts, each a physical quantity over a rate:

- compute: FLOPs per token / (the card's dense peak x the share of it a full fine-tune sustains on
  that card, measured) x, for LoRA/QLoRA, the adapter factor (the Hugging Face stack reaches a
  lower share of peak with adapters than with full fine-tuning);
- dequantization: QLoRA expands every 4-bit weight on each pass (forward, backward, recompute),
  once per micro-batch: bytes moved per weight and pass / memory bandwidth;
- adapter traffic: LoRA's skinny A/B matmuls are memory-bound: they re-read each adapted
  linear's input and write its output again;
- optimizer: the optimizer step's memory traffic, spread over the tokens of one step;
- loss: the cross-entropy over a large vocabulary is memory-bound (logits upcast, softmax, grad);
- host: every kernel costs host time (launch, Python, PEFT wrappers) that small micro-batches do
  not hide: kernels per micro-batch x seconds per kernel;
- communication: the bytes each GPU moves for its sharding scheme, at the width its weights are
  stored in (4-bit QLoRA weights gather at ~0.5 B/param), over the real link (NVLink, PCIe, or the
  node fabric shared by the node's GPUs), less the part compute hides.

Causal attention computes half of the score and value matmuls; with packing that keeps samples
apart (`Workload.attention_len`), attention spans the documents, not the packed row.

The fitted constants (`Factors`) are few and physical: a utilization per calibrated GPU family,
the adapter factor, the dequantization bytes per weight and pass, host seconds per kernel and the
communication overlap. A family without points takes the factor of the calibrated family nearest in
memory bandwidth per FLOP, and the estimate says so. They are fitted on published throughputs
(`data/throughput_points.json`, `bench/cost_calibration.py`) and live in
`data/throughput_factors.json`. Everything here is pure arithmetic over its arguments.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

from gpucat.memory import ModelArch, TrainSettings, lora_trainable_params, param_counts
from gpucat.memory.archs import block_linears, lora_targets

# Causal attention (flash or SDPA with is_causal) computes about half of the score and value matmuls.
CAUSAL_FRACTION = 0.5
# Bytes a 4-bit weight (plus its share of the absmax) occupies when gathered by FSDP/ZeRO-3.
NF4_BYTES_PER_PARAM = 0.516
WEIGHT_BYTES = {"nf4": NF4_BYTES_PER_PARAM, "nf4-dq": NF4_BYTES_PER_PARAM, "int8": 1.0}
# LoRA's A and B matmuls are memory-bound: per token and adapted linear, forward reads the input
# (d_in) and writes/reads the output (d_out) again; backward does both twice (bf16, 2 bytes).
ADAPTER_PASSES = 3
# Cross-entropy bytes per logit (vocabulary entry) per token: the standard loss writes bf16 logits,
# upcasts them to fp32, reads them for the softmax and writes the fp32 gradient; a chunked loss
# still upcasts chunk by chunk; a fused loss never materializes them.
LOSS_BYTES_PER_LOGIT = {"standard": 16.0, "chunked": 10.0, "fused": 0.0}
# Kernels an eager decoder layer launches in its forward (norms, projections, rotary, attention,
# residuals, activation), and those each LoRA-adapted linear adds (A, B, scale, add; +1 dropout).
KERNELS_PER_LAYER = 30
KERNELS_PER_ADAPTED_LINEAR = 4
COMPILED_KERNEL_SHARE = 0.5  # torch.compile fuses the elementwise kernels
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
    vocab_size: int = 0  # logits per token (the loss's cost)
    adapted_linears: int = 0  # LoRA-adapted linear layers in the whole model
    adapted_io: int = 0  # sum of in + out features over the adapted linears (their activations' width)


@dataclass(frozen=True)
class Workload:
    """What the time model needs beyond `TrainSettings`, all optional."""

    attention_len: int | None = None  # tokens each token attends over when packing keeps samples apart (mean document length)
    fused_kernels: bool = False  # hand-fused kernels (Unsloth, Liger): fewer launches per layer and per adapter, as torch.compile


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
    """Fitted constants of the time model (see data/throughput_factors.json)."""

    utilization: dict[str, float]  # share of the dense peak a full fine-tune sustains, by calibrated GPU family
    adapter: float  # LoRA/QLoRA share of peak relative to full fine-tuning
    overlap: float  # share of compute time that can hide communication
    dequant_bytes_per_param: float = 2.5  # effective bytes moved per 4-bit weight and pass when expanding it
    host_s_per_kernel: float = 0.0  # host time per launched kernel that the GPU does not hide
    attention_efficiency: float = 1.0  # share of the matmuls' rate the attention kernels (flash/SDPA) reach
    families: dict[str, str] = field(default_factory=dict)  # calibrated family -> its architecture
    bytes_per_flop: dict[str, float] = field(default_factory=dict)  # calibrated family -> memory bandwidth / peak
    error_band: tuple[float, float] = (1.0, 1.0)  # measured / estimated, 20th and 80th percentile of the LOSO errors
    fitted_on: tuple[str, ...] = ()

    def for_gpu(self, hw: Hardware) -> tuple[float, str | None]:
        """Utilization for a GPU family, and a note when it is not its own.

        Fallback rule: a family with no calibration points takes the factor of the calibrated
        family nearest to it in memory bandwidth per FLOP (log distance): what a card sustains
        outside its big matmuls is set by how many bytes it can move per FLOP.
        """
        if hw.family in self.utilization:
            return self.utilization[hw.family], None
        ratio = _bytes_per_flop(hw)
        known = {f: r for f, r in self.bytes_per_flop.items() if f in self.utilization}
        if ratio is None or not known:
            value = min(self.utilization.values())
            return value, f"no calibration for {hw.family} and no bandwidth figure: lowest calibrated utilization {value:.2f}"
        nearest = min(known, key=lambda f: abs(math.log(known[f] / ratio)))
        value = self.utilization[nearest]
        return value, (
            f"no calibration for {hw.family}: utilization {value:.2f} of {nearest}, the calibrated card nearest in"
            f" memory bandwidth per FLOP ({ratio:.1f} vs {known[nearest]:.1f} B/kFLOP)"
        )


@dataclass(frozen=True)
class Throughput:
    tokens_per_s: float  # the whole configuration
    tokens_per_s_per_gpu: float
    flops_per_token: float
    utilization: float  # share of peak used for the compute part (card x adapter factor)
    scaling_efficiency: float  # throughput per GPU against the same GPU alone
    seconds_per_token: dict[str, float]  # per GPU, by part
    assumptions: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class TimeTerms:
    """The factor-free quantities of one configuration: seconds = f(terms, factors)."""

    flops_per_token: float
    attention_flops_per_token: float  # the part of flops_per_token in the score and value matmuls
    peak_flops: float  # FLOP/s
    adapter: bool
    dequant_param_passes_per_token: float  # 4-bit weights expanded per token (x bytes per weight / bandwidth)
    bandwidth: float  # B/s, 0 when unknown
    fixed_s: dict[str, float]  # parts with no fitted constant: adapter traffic, optimizer, loss
    comm_s: float  # communication per token at the link's bandwidth, before overlap
    kernels_per_token: float
    assumptions: tuple[str, ...] = ()


def _bytes_per_flop(hw: Hardware) -> float | None:
    """Memory bandwidth per peak FLOP, in bytes per kFLOP."""
    if not hw.memory_bandwidth_gbps or not hw.peak_tflops:
        return None
    return hw.memory_bandwidth_gbps * 1e9 / (hw.peak_tflops * 1e12) * 1e3


def model_shape(arch: ModelArch, settings: TrainSettings) -> ModelShape:
    counts = param_counts(arch)
    matmul = arch.vocab_size * arch.hidden_size  # the output projection, tied or not
    linears = block_linears(arch)
    for lin in linears:
        count = lin.count
        if arch.is_moe and lin.name in ("gate", "up", "down") and arch.moe_intermediate_size in (lin.in_features, lin.out_features):
            count = count * arch.n_active_experts // arch.n_experts  # only the routed experts run
        matmul += lin.in_features * lin.out_features * count
    adapted = adapted_io = 0
    if settings.method == "full":
        trainable = counts.total
    else:
        names = set(lora_targets(settings.lora_targets))
        for lin in linears:
            if lin.name in names:
                adapted += lin.count
                adapted_io += (lin.in_features + lin.out_features) * lin.count
        if settings.adapter_params is not None:
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
        vocab_size=arch.vocab_size,
        adapted_linears=adapted,
        adapted_io=adapted_io,
    )


def attention_flops_per_token(shape: ModelShape, settings: TrainSettings, workload: Workload | None = None) -> float:
    """Forward FLOPs of the score and value matmuls for one token: 2 matmuls x 2 FLOPs x span x width,
    halved by the causal mask; the span is the document length when packing keeps samples apart."""
    span = settings.seq_len
    if workload is not None and workload.attention_len:
        span = min(span, workload.attention_len)
    return 2 * 2 * span * shape.attn_dim * shape.layers * CAUSAL_FRACTION


def flops_per_token(shape: ModelShape, settings: TrainSettings, workload: Workload | None = None) -> dict[str, float]:
    """Training FLOPs per token, part by part.

    Forward: 2 per weight (plus adapters) and the attention matmuls. Backward: gradients with
    respect to activations cost a forward's matmuls again; full fine-tuning adds the weight
    gradients (another forward's worth), while LoRA/QLoRA skip them for frozen weights but still
    back-propagate through every layer. Gradient checkpointing recomputes one forward.
    """
    adapter = 0 if settings.method == "full" else shape.trainable_params
    attention = attention_flops_per_token(shape, settings, workload)
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


def weight_bytes_per_param(settings: TrainSettings) -> float:
    """Width a frozen weight is stored (and gathered) in."""
    if settings.method == "qlora":
        return WEIGHT_BYTES.get(settings.quant, NF4_BYTES_PER_PARAM)
    return 4.0 if settings.precision == "fp32" else 2.0


def communication_bytes(shape: ModelShape, settings: TrainSettings, gpus: int) -> tuple[float, float]:
    """Bytes each GPU sends per micro-batch, and per optimizer step, for its sharding scheme.

    ZeRO-3/FSDP gather every weight at its stored width on each pass (forward, backward,
    recompute) and reduce-scatter the trainable gradients every micro-batch; ZeRO-2 keeps only
    its gradient partition, so it reduce-scatters every micro-batch too, and all-gathers the updated
    weights once a step; ZeRO-1 reduces and gathers once a step; DDP
    all-reduces the gradients once a step. A ring moves (n-1)/n of the data per GPU and phase.
    """
    if gpus <= 1:
        return 0.0, 0.0
    share = (gpus - 1) / gpus
    grad_bytes = 4 if settings.precision in ("bf16-mixed", "fp16-mixed", "fp32") else 2
    if settings.sharding in ("zero3", "fsdp"):
        gathers = 2 + (1 if settings.grad_checkpointing else 0)
        frozen = shape.params - (shape.trainable_params if settings.method == "full" else 0)
        weights = frozen * weight_bytes_per_param(settings) + shape.trainable_params * (2 if settings.method != "full" else weight_bytes_per_param(settings))
        per_micro = share * (gathers * weights + grad_bytes * shape.trainable_params)
        return per_micro, 0.0
    if settings.sharding == "zero2":  # gradients live in partitions only: reduce-scattered every micro-batch
        return share * grad_bytes * shape.trainable_params, share * 2 * shape.trainable_params
    if settings.sharding == "zero1":
        return 0.0, share * (grad_bytes + 2) * shape.trainable_params
    return 0.0, 2 * share * grad_bytes * shape.trainable_params  # all-reduce once per step


def link_gbps(hw: Hardware) -> tuple[float, list[str]]:
    """GB/s one way per GPU for collectives: the scale-up link within a node; across nodes, the
    node's fabric shared by its GPUs (every GPU's ring traffic leaves the node)."""
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
        per_node = max(1, hw.gpus // hw.nodes)
        bandwidth = min(bandwidth, gbit / 8 / per_node)
    return bandwidth, notes


def kernels_per_micro_batch(shape: ModelShape, settings: TrainSettings, workload: Workload | None = None) -> float:
    """Kernels launched for one micro-batch: forward, backward (about twice the forward's) and recompute."""
    passes = 3 + (1 if settings.grad_checkpointing else 0)
    fused = settings.compile or (workload is not None and workload.fused_kernels)
    share = COMPILED_KERNEL_SHARE if fused else 1.0
    per_layer = KERNELS_PER_LAYER * share
    per_adapter = (KERNELS_PER_ADAPTED_LINEAR + (1 if settings.lora_dropout > 0 else 0)) * share
    return passes * (shape.layers * per_layer + shape.adapted_linears * per_adapter)


def time_terms(shape: ModelShape, settings: TrainSettings, hw: Hardware, workload: Workload | None = None) -> TimeTerms:
    """Everything about the run's time that needs no fitted constant."""
    assumptions: list[str] = []
    micro_tokens = settings.batch_size * settings.seq_len
    step_tokens = micro_tokens * settings.grad_accumulation
    flops = sum(flops_per_token(shape, settings, workload).values())
    passes_attention = 3 + (1 if settings.grad_checkpointing else 0)  # forward, backward (2x), recompute
    attention = passes_attention * attention_flops_per_token(shape, settings, workload)
    bandwidth = (hw.memory_bandwidth_gbps or 0) * 1e9
    if not bandwidth:
        assumptions.append(f"no memory bandwidth for {hw.gpu_model}: memory-bound parts left out")
    passes = 2 + (1 if settings.grad_checkpointing else 0)
    dequant = passes * shape.quantized_params / micro_tokens

    fixed: dict[str, float] = {}
    adapter_bytes = ADAPTER_PASSES * 2 * shape.adapted_io if settings.method != "full" else 0
    fixed["adapter"] = adapter_bytes / bandwidth if bandwidth else 0.0
    fixed["loss"] = shape.vocab_size * LOSS_BYTES_PER_LOGIT[settings.cross_entropy] / bandwidth if bandwidth else 0.0

    sharded_states = settings.sharding in ("zero1", "zero2", "zero3", "fsdp")
    trainable_here = shape.trainable_params / (hw.gpus if sharded_states else 1)
    step_bytes = trainable_here * optimizer_bytes_per_param(settings)
    if settings.offload != "none":
        host_seconds = trainable_here * 4 / (PCIE_GBPS * 1e9) + step_bytes / (HOST_OPTIMIZER_GBPS * 1e9)
        fixed["optimizer"] = host_seconds / step_tokens
        assumptions.append(
            f"optimizer step on the host: {PCIE_GBPS:g} GB/s PCIe, {HOST_OPTIMIZER_GBPS:g} GB/s host memory (not calibrated)"
        )
    else:
        fixed["optimizer"] = step_bytes / (bandwidth * step_tokens) if bandwidth else 0.0

    comm = 0.0
    if hw.gpus > 1:
        per_micro, per_step = communication_bytes(shape, settings, hw.gpus)
        link, notes = link_gbps(hw)
        assumptions += notes
        comm = (per_micro / micro_tokens + per_step / step_tokens) / (link * 1e9)
    return TimeTerms(
        flops_per_token=flops,
        attention_flops_per_token=attention,
        peak_flops=hw.peak_tflops * 1e12,
        adapter=settings.method != "full",
        dequant_param_passes_per_token=dequant,
        bandwidth=bandwidth,
        fixed_s=fixed,
        comm_s=comm,
        kernels_per_token=kernels_per_micro_batch(shape, settings, workload) / micro_tokens,
        assumptions=tuple(assumptions),
    )


def seconds_per_token(terms: TimeTerms, utilization: float, factors: Factors) -> dict[str, float]:
    """Per-GPU seconds per token, by part, for a card sustaining `utilization` of its peak."""
    share = utilization * (factors.adapter if terms.adapter else 1.0)
    matmul = terms.flops_per_token - terms.attention_flops_per_token
    seconds = {"compute": matmul / (terms.peak_flops * share)}
    seconds["attention"] = terms.attention_flops_per_token / (terms.peak_flops * share * factors.attention_efficiency)
    seconds["dequantization"] = (
        terms.dequant_param_passes_per_token * factors.dequant_bytes_per_param / terms.bandwidth if terms.bandwidth else 0.0
    )
    seconds.update(terms.fixed_s)
    seconds["host"] = terms.kernels_per_token * factors.host_s_per_kernel
    seconds["communication"] = max(0.0, terms.comm_s - factors.overlap * (seconds["compute"] + seconds["attention"]))
    return seconds


def throughput(
    shape: ModelShape, settings: TrainSettings, hw: Hardware, factors: Factors, workload: Workload | None = None
) -> Throughput:
    """Sustained training throughput of `hw` for this model and settings."""
    terms = time_terms(shape, settings, hw, workload)
    base, borrowed = factors.for_gpu(hw)
    assumptions = [*([borrowed] if borrowed else []), *terms.assumptions]
    seconds = seconds_per_token(terms, base, factors)
    per_gpu = 1 / sum(seconds.values())
    efficiency = 1.0
    if hw.gpus > 1:
        alone = seconds_per_token(time_terms(shape, settings, replace(hw, gpus=1, nodes=1), workload), base, factors)
        efficiency = min(1.0, per_gpu * sum(alone.values()))
    return Throughput(
        tokens_per_s=per_gpu * hw.gpus,
        tokens_per_s_per_gpu=per_gpu,
        flops_per_token=terms.flops_per_token,
        utilization=base * (factors.adapter if terms.adapter else 1.0),
        scaling_efficiency=efficiency,
        seconds_per_token=seconds,
        assumptions=tuple(dict.fromkeys(assumptions)),
    )


def factors_from_dict(data: dict[str, Any]) -> Factors:
    band = data.get("error_band", {})
    return Factors(
        utilization=dict(data["utilization"]),
        adapter=data["adapter"],
        overlap=data["overlap"],
        dequant_bytes_per_param=data.get("dequant_bytes_per_param", 2.5),
        host_s_per_kernel=data.get("host_s_per_kernel", 0.0),
        attention_efficiency=data.get("attention_efficiency", 1.0),
        families=dict(data.get("families", {})),
        bytes_per_flop=dict(data.get("bytes_per_flop", {})),
        error_band=(band.get("low", 1.0), band.get("high", 1.0)),
        fitted_on=tuple(data.get("fitted_on", ())),
    )


@cache
def load_factors() -> Factors:
    text = resources.files("gpucat.cost").joinpath("data/throughput_factors.json").read_text()
    return factors_from_dict(json.loads(text))
