"""Model architectures: the `model_archs` table, name lookup, and exact parameter counts.

A `ModelArch` holds what the memory estimator needs to know about a transformer: its shapes
(layers, hidden size, heads, KV heads, head dim, MLP width, vocabulary, experts) and the few
structural choices that change parameter counts or saved activations (gated vs plain MLP,
RMSNorm vs LayerNorm, which linears carry biases, tied embeddings, position scheme).

Parameter counts are derived from the shapes alone (`param_counts`), and the shipped table's
`params` column is checked against that derivation in the tests, so a typo in a shape shows up
as a count that disagrees with the model card.
"""

from __future__ import annotations

import csv
import difflib
import functools
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal

from gpucat.schemas.errors import Quantity, UnknownModel, UserInputError

ArchType = Literal["decoder", "encoder-decoder", "encoder"]

# Names of the linear projections a LoRA target set can name. "gate"/"up"/"down" are the
# gated MLP (SwiGLU, GeGLU); a plain MLP has only "up" (fc1) and "down" (fc2). In T5 the
# attention names cover both self- and cross-attention, as PEFT's ["q", "v"] default does.
ATTENTION_MODULES = ("q", "k", "v", "o")
MLP_MODULES = ("gate", "up", "down")
LORA_TARGET_PRESETS: dict[str, tuple[str, ...]] = {
    "qv": ("q", "v"),
    "attn": ATTENTION_MODULES,
    "all-linear": ATTENTION_MODULES + MLP_MODULES,
}


# The setting that gives a model by its config.json instead of a name (`--config` on the command line).
CONFIG = Quantity("config", "config")

@dataclass(frozen=True)
class ModelArch:
    """Shapes of one model. Counts are whole numbers; sizes are in elements, not bytes."""

    name: str  # Hugging Face repo id, e.g. "meta-llama/Llama-3.1-8B"
    alias: str  # short lower-case name, e.g. "llama-3.1-8b"
    family: str  # config.json model_type, e.g. "llama", "qwen2", "t5"
    arch_type: ArchType
    params: int  # total parameters (published, or derived for --config models)
    n_layers: int  # decoder layers (the encoder's for arch_type "encoder")
    n_encoder_layers: int  # encoder layers of an encoder-decoder; 0 otherwise
    hidden_size: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    intermediate_size: int  # dense MLP width
    vocab_size: int
    tied_embeddings: bool
    n_experts: int = 0  # routed experts per MoE layer; 0 for dense models
    n_active_experts: int = 0  # experts each token is routed to
    moe_intermediate_size: int = 0  # width of one routed expert
    shared_expert_intermediate_size: int = 0  # total width of always-on shared experts
    n_dense_layers: int = 0  # leading layers with a dense MLP in an MoE model (DeepSeek)
    mlp: Literal["gated", "plain"] = "gated"
    norm: Literal["rms", "layer"] = "rms"
    norms_per_layer: int = 2  # 1: parallel block with one shared norm; 4: Gemma 2/3 sandwich
    bias: Literal["none", "qkv", "all"] = "none"  # which linears carry a bias
    qk_norm: bool = False  # per-head RMSNorm on q and k (Qwen3, Gemma 3)
    position: Literal["rope", "alibi", "learned", "relative"] = "rope"
    max_positions: int = 0  # learned position rows, or relative-attention buckets (T5)
    token_types: int = 0  # BERT token-type embedding rows
    embedding_norm: bool = False  # LayerNorm right after the embedding (BLOOM, BERT)
    lm_head_bias: bool = False  # Phi-1.5/Phi-2
    dropout: float = 0.0  # dropout probability used in training (BERT, T5: 0.1)
    source: str = ""  # where the numbers come from

    @property
    def q_dim(self) -> int:
        return self.n_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.n_kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0


@dataclass(frozen=True)
class Linear:
    """One kind of linear projection and how many copies the model has."""

    name: str  # LoRA target name ("q", "gate", ...), or "router" for an MoE router
    in_features: int
    out_features: int
    count: int  # instances across all layers (and experts)
    bias: bool = False

    @property
    def weight_params(self) -> int:
        return self.in_features * self.out_features * self.count

    @property
    def params(self) -> int:
        return self.weight_params + (self.out_features * self.count if self.bias else 0)


@dataclass(frozen=True)
class ParamCounts:
    total: int
    block_linear: int  # weights of linears inside transformer blocks: what NF4/int8 quantizes
    embedding: int  # token (+ position, type) embeddings
    lm_head: int  # untied output projection (0 when tied)
    other: int  # norms, biases, relative-position tables, routers' biases
    largest_linear: int  # elements of the largest single block linear weight
    largest_layer: int  # parameters of the largest transformer block
    matrices: tuple[tuple[int, int, int], ...]  # (rows, cols, count) of every weight matrix


def block_linears(arch: ModelArch) -> list[Linear]:
    """Every linear projection inside the transformer blocks, grouped by kind."""
    h, q, kv = arch.hidden_size, arch.q_dim, arch.kv_dim
    qkv_bias = arch.bias in ("qkv", "all")
    out_bias = arch.bias == "all"

    if arch.arch_type == "encoder-decoder":
        # Encoder: self-attention. Decoder: self- and cross-attention (same shapes).
        attn_blocks = arch.n_encoder_layers + 2 * arch.n_layers
        mlp_blocks = arch.n_encoder_layers + arch.n_layers
    else:
        attn_blocks = mlp_blocks = arch.n_layers

    out = [
        Linear("q", h, q, attn_blocks, qkv_bias),
        Linear("k", h, kv, attn_blocks, qkv_bias),
        Linear("v", h, kv, attn_blocks, qkv_bias),
        Linear("o", q, h, attn_blocks, out_bias),
    ]

    def mlp(width: int, count: int) -> list[Linear]:
        if count == 0 or width == 0:
            return []
        up = [Linear("gate", h, width, count, out_bias)] if arch.mlp == "gated" else []
        return [*up, Linear("up", h, width, count, out_bias), Linear("down", width, h, count, out_bias)]

    if arch.is_moe:
        moe_layers = arch.n_layers - arch.n_dense_layers
        out += mlp(arch.intermediate_size, arch.n_dense_layers)
        out += mlp(arch.moe_intermediate_size, moe_layers * arch.n_experts)
        out += mlp(arch.shared_expert_intermediate_size, moe_layers)
        out.append(Linear("router", h, arch.n_experts, moe_layers))
    else:
        out += mlp(arch.intermediate_size, mlp_blocks)
    return out


def param_counts(arch: ModelArch) -> ParamCounts:
    """Exact parameter count derived from the shapes (biases and norms included)."""
    h, v = arch.hidden_size, arch.vocab_size
    linears = block_linears(arch)
    norm_size = h if arch.norm == "rms" else 2 * h

    embedding = v * h + arch.token_types * h
    if arch.position == "learned":
        embedding += arch.max_positions * h

    other = sum(lin.params - lin.weight_params for lin in linears)
    if arch.arch_type == "encoder-decoder":
        # T5: 2 norms per encoder layer, 3 per decoder layer, a final norm per stack, and a
        # relative-position bias table in the first layer of each stack.
        block_norms = (2 * arch.n_encoder_layers + 3 * arch.n_layers) * norm_size
        other += block_norms + 2 * norm_size + 2 * arch.max_positions * arch.n_heads
    else:
        block_norms = arch.norms_per_layer * arch.n_layers * norm_size
        if arch.qk_norm:
            block_norms += 2 * arch.head_dim * arch.n_layers
        final_norm = 0 if arch.arch_type == "encoder" else norm_size  # BERT is post-norm
        other += block_norms + final_norm
    if arch.embedding_norm:
        other += 2 * h  # a LayerNorm with bias
    if arch.arch_type == "encoder":
        other += h * h + h  # BERT's pooler: outside the blocks and never quantized

    lm_head = 0 if arch.tied_embeddings or arch.arch_type == "encoder" else v * h
    if arch.lm_head_bias:
        other += v

    block_linear = sum(lin.weight_params for lin in linears)
    total = embedding + block_linear + other + lm_head

    n_blocks = arch.n_layers + arch.n_encoder_layers
    largest_layer = max(
        (sum(lin.params for lin in linears) + block_norms) // n_blocks,
        embedding,
        lm_head,
    )
    matrices = tuple((lin.out_features, lin.in_features, lin.count) for lin in linears)
    matrices += ((v, h, 1),) + (((v, h, 1),) if lm_head else ())
    return ParamCounts(
        total=total,
        block_linear=block_linear,
        embedding=embedding,
        lm_head=lm_head,
        other=other,
        largest_linear=max(lin.in_features * lin.out_features for lin in linears),
        largest_layer=largest_layer,
        matrices=matrices,
    )


def lora_targets(names: str | tuple[str, ...]) -> tuple[str, ...]:
    """A preset name ("qv", "attn", "all-linear") or explicit module names → module names."""
    if isinstance(names, str):
        try:
            return LORA_TARGET_PRESETS[names]
        except KeyError:
            known = ", ".join(LORA_TARGET_PRESETS)
            raise UserInputError(f"unknown LoRA target set {names!r}; use one of {known}") from None
    return tuple(names)


def lora_trainable_params(arch: ModelArch, rank: int, targets: str | tuple[str, ...]) -> int:
    """Parameters LoRA adds: rank * (in + out) for every adapted linear (PEFT's A and B).

    `targets` may include "lm_head" (torchtune's apply_lora_to_output).
    """
    names = set(lora_targets(targets))
    total = sum(
        rank * (lin.in_features + lin.out_features) * lin.count
        for lin in block_linears(arch)
        if lin.name in names
    )
    if "lm_head" in names:
        total += rank * (arch.hidden_size + arch.vocab_size)
    return total


# --- the shipped table -------------------------------------------------------------------

_INT_FIELDS = {f.name for f in fields(ModelArch) if f.type in ("int",)}
_BOOL_FIELDS = {f.name for f in fields(ModelArch) if f.type in ("bool",)}
_FLOAT_FIELDS = {f.name for f in fields(ModelArch) if f.type in ("float",)}
CSV_COLUMNS = tuple(f.name for f in fields(ModelArch))


def _arch_from_row(row: dict[str, str]) -> ModelArch:
    values: dict[str, object] = {}
    for name, raw in row.items():
        if name in _INT_FIELDS:
            values[name] = int(raw)
        elif name in _BOOL_FIELDS:
            values[name] = raw.strip().lower() == "true"
        elif name in _FLOAT_FIELDS:
            values[name] = float(raw)
        else:
            values[name] = raw
    return ModelArch(**values)  # type: ignore[arg-type]


MODEL_ARCHS_CSV = Path(__file__).parent / "data" / "model_archs.csv"


@functools.cache
def load_model_archs() -> tuple[ModelArch, ...]:
    """The `model_archs` table shipped in gpucat/memory/data/model_archs.csv."""
    text = MODEL_ARCHS_CSV.read_text("utf-8")
    return tuple(_arch_from_row(row) for row in csv.DictReader(text.splitlines()))


def find_model_arch(name: str) -> ModelArch | None:
    """Case-insensitive match on the repo id or the alias; None when the table lacks it."""
    key = name.strip().lower()
    for arch in load_model_archs():
        if key in (arch.name.lower(), arch.alias.lower()):
            return arch
    return None


# Fine-tuned variants published next to a base model share its architecture (the same config.json
# shapes): "-Instruct", "-chat", "-it" (Gemma), and the "-hf"/"-base"/"-pt" of the base repos
# themselves, and Meta's older "Meta-Llama-3.1-…" repo names.
_VARIANT = re.compile(r"(?:-(?:instruct|chat|it|hf|base|pt))+$")


def _base_key(repo_name: str) -> str:
    return _VARIANT.sub("", repo_name.strip().lower().removeprefix("meta-"))


def find_variant_arch(name: str) -> ModelArch | None:
    """The table's model whose instruct or chat variant `name` is (`meta-llama/Llama-3.1-8B-Instruct`
    -> meta-llama/Llama-3.1-8B), offline; None when the table holds no base for it."""
    org, _, repo = name.strip().lower().rpartition("/")
    key = _base_key(repo)
    for arch in load_model_archs():
        arch_org, _, arch_repo = arch.name.lower().rpartition("/")
        if (not org or org == arch_org) and key in (_base_key(arch_repo), arch.alias.lower()):
            return arch
    return None


def nearest_model_names(name: str, n: int = 3) -> list[str]:
    """Aliases and repo ids close to a name nobody knows (for "did you mean")."""
    names = {k.lower(): k for a in load_model_archs() for k in (a.alias, a.name)}
    squeezed = {k.replace("-", "").replace(".", ""): k for k in names}
    key = name.strip().lower()
    close = difflib.get_close_matches(key, list(names), n=n, cutoff=0.75)
    close += [squeezed[m] for m in difflib.get_close_matches(key.replace("-", "").replace(".", ""), list(squeezed), n=n, cutoff=0.8)]
    return [names[k] for k in dict.fromkeys(close)][:n]


def get_model_arch(name: str) -> ModelArch:
    """Like `find_model_arch`, but an unknown name is an `UnknownModel` error."""
    arch = find_model_arch(name)
    if arch is None:
        raise UnknownModel(
            "model {name!r} is not in gpucat's model table (see `gpucat models`); pass {config} path/to/config.json",
            name=name, config=CONFIG,
        )
    return arch
