"""`gpucat memory` (peak GPU memory of a fine-tuning run) and `gpucat models` (the model table).

The training options are `Annotated` aliases so `gpucat fit` can declare the same flags with the
same help. Choice-valued options are plain strings checked by the library, so a bad value is one
`error: ...` line like every other expected failure. The memory package is imported inside the
commands to keep `gpucat --help` fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpucat.cli import app
from gpucat.cli._common import echo_json, handle_errors

ModelOption = Annotated[str | None, typer.Option(
    "--model", "-m", show_default=False,
    help="Model from `gpucat models` (repo id or alias, any case). An org/name repo id that is not in "
    "the table is fetched from the Hugging Face Hub and cached, unless --offline.",
)]
ConfigOption = Annotated[Path | None, typer.Option(
    "--config", show_default=False, help="A Hugging Face config.json describing the model (instead of --model).",
)]
OfflineOption = Annotated[bool, typer.Option("--offline", help="Never fetch config.json from the Hub.")]
MethodOption = Annotated[str | None, typer.Option(
    "--method", show_default=False, help="Required: full | lora | qlora (LoRA on a 4-bit base).",
)]
PrecisionOption = Annotated[str, typer.Option(
    "--precision",
    help="bf16-true (weights, gradients, optimizer states and activations in bf16) | bf16-mixed (fp32 "
    "weights, gradients and states; bf16 autocast) | fp16-mixed | fp32.",
)]
OptimizerOption = Annotated[str, typer.Option(
    "--optimizer",
    help="adamw | adamw-8bit | paged-adamw-8bit (bitsandbytes) | sgd (with momentum) | adafactor (factored, "
    "no momentum).",
)]
LoraRankOption = Annotated[int | None, typer.Option(
    "--lora-rank", show_default=False, help="LoRA rank r, for lora and qlora (default 16).",
)]
LoraTargetsOption = Annotated[str | None, typer.Option(
    "--lora-targets", show_default=False,
    help="Adapted projections: qv | attn (q, k, v, o) | all-linear (attention and MLP; the default).",
)]
LoraDropoutOption = Annotated[float | None, typer.Option(
    "--lora-dropout", show_default=False,
    help="LoRA dropout probability (default 0); above 0 each adapter keeps a dropped copy of its input.",
)]
QuantOption = Annotated[str | None, typer.Option(
    "--quant", show_default=False,
    help="qlora base-weight storage: nf4-dq (NF4 with double quantization; the default) | nf4 | int8.",
)]
BatchOption = Annotated[int, typer.Option("--batch", "-b", help="Micro-batch size per GPU, in sequences.")]
SeqLenOption = Annotated[int, typer.Option(
    "--seq-len", "-s",
    help="Tokens per sequence in the longest batch: the packed length, or the longest sample when "
    "batches are padded.",
)]
TargetLenOption = Annotated[int | None, typer.Option(
    "--target-len", show_default=False,
    help="Decoder length of an encoder-decoder model such as T5 (default: --seq-len).",
)]
CheckpointingOption = Annotated[bool, typer.Option(
    "--grad-checkpointing/--no-grad-checkpointing",
    help="Recompute each layer in backward instead of keeping its activations.",
)]
AttentionOption = Annotated[str, typer.Option(
    "--attention",
    help="flash (FlashAttention or PyTorch SDPA: memory linear in length) | eager (keeps seq x seq scores).",
)]
CrossEntropyOption = Annotated[str, typer.Option(
    "--cross-entropy",
    help="standard (fp32 logits buffers for the whole batch) | chunked (torchtune's chunked loss) | "
    "fused (Liger, Cut Cross-Entropy, or a chunked loss under torch.compile).",
)]
GradAccumOption = Annotated[int, typer.Option(
    "--grad-accum", help="Micro-batches per optimizer step; above 1 gradients stay allocated through forward.",
)]
GpusOption = Annotated[int, typer.Option("--gpus", "-g", help="Data-parallel GPUs sharing the run.")]
ShardingOption = Annotated[str, typer.Option(
    "--sharding",
    help="none | ddp (replicas and gradient buckets) | zero1 (optimizer states) | zero2 (+ gradients) | "
    "zero3 (+ parameters) | fsdp (FULL_SHARD).",
)]
OffloadOption = Annotated[str, typer.Option(
    "--offload",
    help="none | optimizer (states, master weights and gradients to host RAM) | params (also the "
    "parameters; needs zero3 or fsdp).",
)]
OffloadActivationsOption = Annotated[bool, typer.Option(
    "--offload-activations", help="Stream checkpointed activations to host RAM (torchtune).",
)]
OptimizerInBackwardOption = Annotated[bool, typer.Option(
    "--optimizer-in-backward", help="Apply each gradient during backward and free it (torchtune).",
)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


def train_settings(arch: Any, *, batch: int, grad_accum: int, **options: Any) -> Any:
    """`TrainSettings` from the shared training flags (CLI names to field names), for memory and fit."""
    from gpucat.memory import settings_from_options

    return settings_from_options(arch, batch_size=batch, grad_accumulation=grad_accum, **options)


@app.command("memory")
@handle_errors
def memory(
    model: ModelOption = None,
    config: ConfigOption = None,
    method: MethodOption = None,
    precision: PrecisionOption = "bf16-true",
    optimizer: OptimizerOption = "adamw",
    lora_rank: LoraRankOption = None,
    lora_targets: LoraTargetsOption = None,
    lora_dropout: LoraDropoutOption = None,
    quant: QuantOption = None,
    batch: BatchOption = 1,
    seq_len: SeqLenOption = 2048,
    target_len: TargetLenOption = None,
    grad_checkpointing: CheckpointingOption = True,
    attention: AttentionOption = "flash",
    cross_entropy: CrossEntropyOption = "standard",
    grad_accum: GradAccumOption = 1,
    gpus: GpusOption = 1,
    sharding: ShardingOption = "none",
    offload: OffloadOption = "none",
    offload_activations: OffloadActivationsOption = False,
    optimizer_in_backward: OptimizerInBackwardOption = False,
    offline: OfflineOption = False,
    as_json: JsonOption = False,
) -> None:
    """Estimate the peak memory per GPU of a fine-tuning run, component by component.

    Lists what is allocated at the peak moment (GB = 10^9 bytes), host RAM for offloaded state, and the assumptions.
    """
    from gpucat.memory import estimate_memory, model_from_options

    arch = model_from_options(model=model, config=config, allow_hub=not offline)
    settings = train_settings(
        arch, method=method, precision=precision, optimizer=optimizer, lora_rank=lora_rank,
        lora_targets=lora_targets, lora_dropout=lora_dropout, quant=quant, batch=batch, seq_len=seq_len,
        target_len=target_len, grad_checkpointing=grad_checkpointing, attention=attention,
        cross_entropy=cross_entropy, grad_accum=grad_accum, gpus=gpus, sharding=sharding, offload=offload,
        offload_activations=offload_activations, optimizer_in_backward=optimizer_in_backward,
    )  # fmt: skip
    estimate = estimate_memory(arch, settings)
    if as_json:
        echo_json(estimate.to_dict())
    else:
        from gpucat.memory.report import format_estimate

        typer.echo(format_estimate(arch, estimate))


@app.command("models")
@handle_errors
def models(
    query: Annotated[str | None, typer.Argument(
        show_default=False, help="Show only models whose repo id, alias or family contains this text (any case).",
    )] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of rows instead of a table.")] = False,
) -> None:
    """List the model architectures gpucat knows (the model_archs table)."""
    from dataclasses import asdict

    from gpucat.cli._render import print_table
    from gpucat.memory import load_model_archs

    rows = load_model_archs()
    if query:
        q = query.lower()
        rows = tuple(a for a in rows if q in a.name.lower() or q in a.alias.lower() or q in a.family.lower())
    if as_json:
        echo_json([asdict(a) for a in rows])
        return
    columns = ("alias", "repo id", "params (B)", "layers", "hidden", "heads", "kv heads", "vocab", "experts", "type")
    print_table(columns, [
        (a.alias, a.name, round(a.params / 1e9, 2), a.n_layers + a.n_encoder_layers, a.hidden_size, a.n_heads,
         a.n_kv_heads, a.vocab_size, f"{a.n_active_experts} of {a.n_experts}" if a.is_moe else "", a.arch_type)
        for a in rows
    ])
