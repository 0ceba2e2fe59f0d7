"""Activation memory: what autograd keeps between a layer's forward and its backward.

We count, per layer and per token, the tensors that PyTorch saves for backward in the reference
implementations (Hugging Face transformers, torchtune), rather than using one published
constant. That makes the formula follow the choices that move it:

- A frozen linear saves nothing (autograd needs its input only for the weight's gradient), so
  LoRA saves the inputs of adapted projections only, and full fine-tuning saves every input.
- RMSNorm implementations upcast to fp32 and keep that copy (4 bytes per hidden unit); LayerNorm keeps
  its input; under autocast the residual stream is fp32 anyway.
- Attention keeps q, k, v. FlashAttention-style kernels (FlashAttention 2, PyTorch SDPA's flash
  and memory-efficient kernels) add the output and a log-sum-exp; eager attention instead keeps
  the softmax probabilities (fp32, plus a compute-dtype copy) for every (query, key) pair, and
  stores K/V repeated to every query head (grouped-query attention is expanded).
- A gated MLP keeps the gate output, the activation output and the up output (SwiGLU/GeGLU);
  a plain MLP keeps the fc1 output. The down projection's input is kept only if it trains.
- Dropout (BERT, T5) keeps a 1-byte mask per element it touches.
- Gradient checkpointing keeps each layer's input and recomputes one layer at a time in
  backward; the recomputed layer's tensors are a transient counted separately.

The logits and the cross-entropy loss are counted apart (`logits_bytes_per_element`): at the start of the
backward pass a standard loss holds the logits, fp32 log-probabilities and two fp32 gradient
buffers, which for 128k-256k vocabularies is often the largest single transient.

Under torch.compile (`compiled`), AOTAutograd's min-cut partitioner recomputes in backward what
is cheap to recompute from tensors it keeps anyway, so pointwise intermediates are not saved: a
norm keeps its 16-bit input and its reciprocal RMS (not the fp32 copy, nor the normalized and
weighted outputs that feed the projections), SwiGLU keeps gate and up (not the activation, nor the
product that feeds the down projection), LoRA dropout keeps its mask. Outputs of matmuls and the
attention kernel's inputs and outputs stay saved.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucat.memory.archs import ModelArch

CE_CHUNKS = 8  # chunks a chunked/fused cross-entropy splits the sequence into (torchtune default)


@dataclass(frozen=True)
class ActivationPolicy:
    """What the training setup implies for saved tensors."""

    act_bytes: int  # bytes per element of compute-dtype activations: 2 (bf16/fp16) or 4 (fp32)
    autocast: bool  # mixed precision: fp32 residual stream, a compute-dtype cast per linear
    saved_inputs: frozenset[str]  # linears whose input must be kept ("q", "down", "lm_head", ...)
    norms_trainable: bool  # full fine-tuning: RMSNorm weights need their normalized input
    flash: bool  # linear-memory attention kernel rather than eager softmax
    lora_rank: int = 0  # 0 when there are no LoRA adapters
    lora_modules: frozenset[str] = frozenset()
    lora_dropout: bool = False
    compiled: bool = False  # torch.compile: pointwise intermediates recomputed in backward
    logits_bytes: int = 0  # bytes per logit when they differ from act_bytes (fp32 output projection); 0: act_bytes
    # LLM.int8 linears (bitsandbytes MatMul8bitLt) save an int8 copy of their input next to the
    # 16-bit input itself (`ctx.tensors = (CAt, subA, A)`): bytes per input element, 0 otherwise.
    int8_input_bytes: int = 0


@dataclass(frozen=True)
class ActivationEstimate:
    """Bytes, for one GPU's micro-batch."""

    saved: float  # kept from forward to backward across all layers
    recompute: float  # transient while one checkpointed layer is recomputed (0 without checkpointing)
    logits: float  # peak of logits + loss buffers


def _norm(arch: ModelArch, p: ActivationPolicy) -> float:
    h = arch.hidden_size
    if p.compiled:  # the input as it arrives, plus fp32 per-token statistics
        return (4 if p.autocast or p.act_bytes == 4 else p.act_bytes) * h + (4 if arch.norm == "rms" else 8)
    fp32_input = arch.norm == "rms" or p.autocast or p.act_bytes == 4
    kept = 4 * h if fp32_input else p.act_bytes * h
    if p.norms_trainable and arch.norm == "rms":
        kept += p.act_bytes * h  # weight * normalized keeps the normalized tensor for the weight's grad
    return kept


def _inputs(p: ActivationPolicy, consumers: tuple[str, ...], width: int) -> float:
    """A normalized tensor read by several linears: kept once, or once per linear under autocast
    (each linear casts its input to the compute dtype and keeps its own copy)."""
    n = sum(1 for name in consumers if name in p.saved_inputs)
    if n == 0 or p.compiled:  # compiled: recomputed from the norm's input
        return 0.0
    return p.act_bytes * width * (n if p.autocast else 1)


def _scores(arch: ModelArch, p: ActivationPolicy) -> float:
    """Bytes per (query, key) pair kept by eager attention, per head."""
    a = p.act_bytes
    kept = 4 + (a if a < 4 else 0)  # fp32 softmax output + the compute-dtype copy used for probs @ V
    if arch.dropout > 0:
        kept += 1 + a  # dropout mask + dropped probabilities
    return kept


def _attention(arch: ModelArch, p: ActivationPolicy, keys: int) -> float:
    """Per query token: one self-attention sub-block without its norm."""
    a, h, q, nh = p.act_bytes, arch.hidden_size, arch.q_dim, arch.n_heads
    kv = arch.kv_dim if p.flash else q  # eager attention repeats K/V to every query head
    kept: float = a * (q + 2 * kv)
    if arch.qk_norm:  # per-head RMSNorm keeps fp32 copies of q and k (compiled: the 16-bit inputs)
        kept += (a if p.compiled else 4) * (q + arch.kv_dim)
    if p.flash:
        kept += a * q + 4 * nh  # output + fp32 log-sum-exp
    else:
        kept += nh * keys * _scores(arch, p)
    if "o" in p.saved_inputs and not (p.compiled and p.flash):
        kept += a * q  # the output projection keeps its (re-laid-out) input
    if arch.dropout > 0:
        kept += h  # residual dropout mask
    return kept


def _mlp(arch: ModelArch, p: ActivationPolicy, width: int) -> float:
    """Per token: one MLP (dense, or one expert) without its norm and input."""
    a = p.act_bytes
    if p.compiled:  # gate and up (or fc1) outputs; activation and product recomputed
        kept = (2 if arch.mlp == "gated" else 1) * a * width
    else:
        kept = (3 if arch.mlp == "gated" else 1) * a * width
        if "down" in p.saved_inputs:
            kept += a * width
    if arch.dropout > 0:
        kept += arch.hidden_size  # residual dropout mask
        if arch.arch_type == "encoder-decoder":
            kept += width  # T5 also drops inside the MLP
    return kept


def _lora_extras(arch: ModelArch, p: ActivationPolicy) -> float:
    """Per token per layer: each adapter keeps its rank-r intermediate (and dropout copies)."""
    if not p.lora_rank:
        return 0.0
    widths = {"q": arch.hidden_size, "k": arch.hidden_size, "v": arch.hidden_size, "o": arch.q_dim,
              "gate": arch.hidden_size, "up": arch.hidden_size, "down": arch.intermediate_size}
    routed = max(arch.n_active_experts, 1)
    total = 0.0
    for name in p.lora_modules & widths.keys():
        if arch.mlp == "plain" and name == "gate":
            continue
        copies = routed if arch.is_moe and name in ("gate", "up", "down") else 1
        per = p.act_bytes * p.lora_rank
        if p.lora_dropout:  # mask + dropped input, kept by lora_A (compiled: the mask)
            per += (1 if p.compiled else 1 + p.act_bytes) * widths[name]
        total += copies * per
    return total


def _ffn(arch: ModelArch, p: ActivationPolicy, moe_layer: bool) -> float:
    """Per token: the feed-forward part of a layer, MoE routing included."""
    if not moe_layer:
        return _mlp(arch, p, arch.intermediate_size)
    a, h = p.act_bytes, arch.hidden_size
    kept: float = 4 * arch.n_experts  # fp32 router probabilities
    per_copy = _mlp(arch, p, arch.moe_intermediate_size)
    if p.saved_inputs & {"gate", "up"}:
        per_copy += a * h  # the token's copy gathered for its expert
    if p.norms_trainable:
        per_copy += a * h  # expert output, kept by the routing-weight product for the router's grad
    kept += arch.n_active_experts * per_copy
    if arch.shared_expert_intermediate_size:
        kept += _mlp(arch, p, arch.shared_expert_intermediate_size)
    return kept


def layer_bytes(arch: ModelArch, p: ActivationPolicy, keys: int, moe_layer: bool = False) -> float:
    """Per token: everything one (self-attention + MLP) layer keeps for backward."""
    mlp_in = ("gate", "up") if arch.mlp == "gated" else ("up",)
    kept = _norm(arch, p)
    if arch.norms_per_layer == 1:  # parallel block: attention and MLP read one normalized input
        kept += _inputs(p, ("q", "k", "v", *mlp_in), arch.hidden_size)
    else:
        kept += _inputs(p, ("q", "k", "v"), arch.hidden_size) + _norm(arch, p)
        kept += _inputs(p, mlp_in, arch.hidden_size)
    if arch.norms_per_layer == 4:
        kept += 2 * _norm(arch, p)  # Gemma 2/3 post-attention and post-MLP norms
    kept += _attention(arch, p, keys) + _ffn(arch, p, moe_layer) + _lora_extras(arch, p)
    if p.int8_input_bytes:  # each int8 linear quantizes and keeps its own input
        mlp_width = (2 if arch.mlp == "gated" else 1) * arch.hidden_size + arch.intermediate_size
        kept += p.int8_input_bytes * (3 * arch.hidden_size + arch.q_dim + mlp_width)
    return kept


def _layer_input(p: ActivationPolicy, arch: ModelArch) -> float:
    """Per token: what a checkpointed layer keeps (its input on the residual stream)."""
    return (4 if p.autocast else p.act_bytes) * arch.hidden_size


def logits_bytes_per_element(p: ActivationPolicy, cross_entropy: str) -> float:
    """Peak bytes per (token, vocabulary entry) for the logits and the cross-entropy loss.

    standard: logits in the compute dtype, fp32 log-probabilities kept for backward, then two fp32
    gradient buffers while the loss backward runs. chunked: the loss runs over CE_CHUNKS chunks,
    each keeping its fp32 log-probabilities (torchtune's CEWithChunkedOutputLoss in eager mode).
    fused: the loss never holds more than one chunk's fp32 gradient (Liger, Cut Cross-Entropy, or a
    chunked loss under torch.compile); the compute-dtype logits are still counted, which is
    conservative for kernels that never materialise them.
    """
    a = p.logits_bytes or p.act_bytes
    if cross_entropy == "standard":
        return a + 12
    if cross_entropy == "chunked":
        return a + 4 + 8 / CE_CHUNKS
    return a + 4 / CE_CHUNKS


def estimate_activations(
    arch: ModelArch,
    p: ActivationPolicy,
    *,
    batch: int,
    seq_len: int,
    target_len: int,
    checkpointing: bool,
    cross_entropy: str,
) -> ActivationEstimate:
    """Saved activations, recompute transient and logits for one micro-batch."""
    h = arch.hidden_size
    head = _norm(arch, p) + (p.act_bytes * h if "lm_head" in p.saved_inputs and not p.compiled else 0)
    ce = logits_bytes_per_element(p, cross_entropy)

    if arch.arch_type == "encoder-decoder":
        src, tgt = batch * seq_len, batch * target_len
        enc = layer_bytes(arch, p, seq_len)
        dec_self = layer_bytes(arch, p, target_len)
        cross = _norm(arch, p) + _inputs(p, ("q",), h) + _attention(arch, p, seq_len)
        cross_kv_per_src_token = p.act_bytes * 2 * arch.kv_dim  # K and V of the encoder output
        enc_out = p.act_bytes * h if p.saved_inputs & {"k", "v"} else 0  # input of cross K/V
        # The relative-position bias plus the mask: one (batch, heads, q, k) tensor per stack,
        # kept for the bias table's gradient whichever attention kernel runs.
        bias = p.act_bytes * batch * arch.n_heads * (seq_len**2 + target_len**2)
        per_layer = max(enc * src, (dec_self + cross) * tgt + cross_kv_per_src_token * src)
        if checkpointing:
            saved = _layer_input(p, arch) * (arch.n_encoder_layers * src + arch.n_layers * tgt)
            saved += (_layer_input(p, arch) + enc_out) * src + bias
            recompute = per_layer
        else:
            saved = arch.n_encoder_layers * enc * src
            saved += arch.n_layers * ((dec_self + cross) * tgt + cross_kv_per_src_token * src)
            saved += enc_out * src + bias
            recompute = 0.0
        saved += head * (src + tgt)  # each stack ends in a norm
        return ActivationEstimate(saved, recompute, ce * tgt * arch.vocab_size)

    tokens = batch * seq_len
    moe_layers = arch.n_layers - arch.n_dense_layers if arch.is_moe else 0
    dense = layer_bytes(arch, p, seq_len)
    moe = layer_bytes(arch, p, seq_len, moe_layer=True) if moe_layers else 0.0
    per_layer = max(dense if moe_layers < arch.n_layers else 0.0, moe) * tokens
    if checkpointing:
        saved = _layer_input(p, arch) * arch.n_layers * tokens
        recompute = per_layer
    else:
        saved = ((arch.n_layers - moe_layers) * dense + moe_layers * moe) * tokens
        recompute = 0.0
    saved += head * tokens
    # An encoder-only model is assumed to train a classification head: its logits are negligible.
    logits = 0.0 if arch.arch_type == "encoder" else ce * tokens * arch.vocab_size
    return ActivationEstimate(saved, recompute, logits)
