"""The training options, defined once for every command that takes them (memory, fit, cost).

`@training_options(...)` adds these options to a command's signature and hands the command one
typed `TrainingRequest` (argument `training`) instead of twenty loose values. Choice-valued
options are plain strings checked by the library, so a bad value is one `error: ...` line like
every other expected failure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from gpucat.memory.options import TrainingRequest

F = TypeVar("F", bound=Callable[..., Any])

# Help panels: the options grouped by topic so `--help` reads at 80 columns.
MODEL = "Model and method"
NUMERICS = "Precision and optimizer"
LORA = "LoRA and QLoRA"
BATCH = "Batch and sequence"
SAVERS = "Memory savers"
PARALLEL = "GPUs and sharding"

ModelOption = Annotated[str | None, typer.Option(
    "--model", "-m", show_default=False, rich_help_panel=MODEL,
    help="Name from `gpucat models` (repo id or alias), or an org/name Hub repo id (fetched and cached).",
)]
ConfigOption = Annotated[Path | None, typer.Option(
    "--config", show_default=False, rich_help_panel=MODEL, help="A Hugging Face config.json instead of --model.",
)]
OfflineOption = Annotated[bool, typer.Option("--offline", rich_help_panel=MODEL, help="Never fetch config.json from the Hub.")]
MethodOption = Annotated[str | None, typer.Option(
    "--method", show_default=False, rich_help_panel=MODEL, help="Required: full | lora | qlora (LoRA on a 4-bit base).",
)]
PrecisionOption = Annotated[str, typer.Option(
    "--precision", rich_help_panel=NUMERICS,
    help="bf16-true (all in bf16) | bf16-mixed (fp32 weights and states, bf16 autocast) | fp16-mixed | fp32.",
)]
OptimizerOption = Annotated[str, typer.Option(
    "--optimizer", rich_help_panel=NUMERICS, help="adamw | adamw-8bit | paged-adamw-8bit | sgd (momentum) | adafactor.",
)]
OptimizerImplOption = Annotated[str, typer.Option(
    "--optimizer-impl", show_default=False, rich_help_panel=NUMERICS, help="AdamW step: foreach (default) | fused | per-tensor.",
)]
LoraRankOption = Annotated[int | None, typer.Option(
    "--lora-rank", show_default=False, rich_help_panel=LORA, help="LoRA rank r (default 16).",
)]
LoraTargetsOption = Annotated[str | None, typer.Option(
    "--lora-targets", show_default=False, rich_help_panel=LORA,
    help="qv | attn (q, k, v, o) | all-linear (attention and MLP; the default).",
)]
LoraDropoutOption = Annotated[float | None, typer.Option(
    "--lora-dropout", show_default=False, rich_help_panel=LORA,
    help="Adapter dropout (default 0; above 0 keeps a copy).",
)]
QuantOption = Annotated[str | None, typer.Option(
    "--quant", show_default=False, rich_help_panel=LORA, help="qlora base weights: nf4-dq (default) | nf4 | int8.",
)]
PeftUpcastOption = Annotated[str | None, typer.Option(
    "--peft-upcast", show_default=False, rich_help_panel=LORA, help="qlora: on (PEFT's fp32 upcast; default) | off.",
)]
BitsandbytesOption = Annotated[str, typer.Option(
    "--bitsandbytes", show_default=False, rich_help_panel=LORA, help="current (default) | old (before 0.43.2).",
)]
BatchOption = Annotated[int, typer.Option("--batch", "-b", rich_help_panel=BATCH, help="Micro-batch per GPU, in sequences.")]
SeqLenOption = Annotated[int, typer.Option(
    "--seq-len", "-s", rich_help_panel=BATCH, help="Tokens per sequence: the packed length, or the longest padded sample.",
)]
TargetLenOption = Annotated[int | None, typer.Option(
    "--target-len", show_default=False, rich_help_panel=BATCH, help="Decoder length of an encoder-decoder (T5); default --seq-len.",
)]
GradAccumOption = Annotated[int, typer.Option(
    "--grad-accum", rich_help_panel=BATCH, help="Micro-batches per optimizer step; above 1 gradients stay allocated.",
)]
CheckpointingOption = Annotated[bool, typer.Option(
    "--grad-checkpointing/--no-grad-checkpointing", rich_help_panel=SAVERS,
    help="Recompute each layer in backward instead of keeping its activations.",
)]
AttentionOption = Annotated[str, typer.Option(
    "--attention", rich_help_panel=SAVERS, help="flash | eager (keeps seq x seq scores).",
)]
CrossEntropyOption = Annotated[str, typer.Option(
    "--cross-entropy", rich_help_panel=SAVERS,
    help="standard | chunked (torchtune) | fused (Liger).",
)]
OffloadActivationsOption = Annotated[bool, typer.Option(
    "--offload-activations", rich_help_panel=SAVERS, help="Saved activations to host (torchtune).",
)]
OptimizerInBackwardOption = Annotated[bool, typer.Option(
    "--optimizer-in-backward", rich_help_panel=SAVERS, help="Step in backward (torchtune).",
)]
GpusOption = Annotated[int, typer.Option("--gpus", "-g", rich_help_panel=PARALLEL, help="Data-parallel GPUs sharing the run.")]
ShardingOption = Annotated[str, typer.Option(
    "--sharding", rich_help_panel=PARALLEL,
    help="none | ddp | zero1 (optimizer states) | zero2 (+ gradients) | zero3 (+ parameters) | fsdp (FULL_SHARD).",
)]
OffloadOption = Annotated[str, typer.Option(
    "--offload", rich_help_panel=PARALLEL,
    help="none | optimizer (states, master weights, gradients to host RAM) | params (also weights; zero3/fsdp).",
)]


def _options(gpus: bool, default_sharding: str) -> list[inspect.Parameter]:
    """The typer parameters, in help order; names match `TrainingRequest` fields."""
    defaults = TrainingRequest()
    spec: list[tuple[str, Any]] = [
        ("model", ModelOption), ("config", ConfigOption), ("method", MethodOption), ("precision", PrecisionOption),
        ("optimizer", OptimizerOption), ("optimizer_impl", OptimizerImplOption), ("lora_rank", LoraRankOption), ("lora_targets", LoraTargetsOption),
        ("lora_dropout", LoraDropoutOption), ("quant", QuantOption), ("peft_upcast", PeftUpcastOption),
        ("bitsandbytes", BitsandbytesOption), ("batch", BatchOption), ("seq_len", SeqLenOption),
        ("target_len", TargetLenOption), ("grad_checkpointing", CheckpointingOption), ("attention", AttentionOption),
        ("cross_entropy", CrossEntropyOption), ("grad_accum", GradAccumOption),
        *([("gpus", GpusOption)] if gpus else []),
        ("sharding", ShardingOption), ("offload", OffloadOption), ("offload_activations", OffloadActivationsOption),
        ("optimizer_in_backward", OptimizerInBackwardOption), ("offline", OfflineOption),
    ]  # fmt: skip
    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                          default=default_sharding if name == "sharding" else getattr(defaults, name))
        for name, annotation in spec
    ]  # fmt: skip


def training_options(*, gpus: bool, default_sharding: str) -> Callable[[F], F]:
    """Give a command the training options; it receives them as `training: TrainingRequest`.

    `gpus=False` leaves out `--gpus` for commands that try several GPU counts themselves.
    """

    def decorate(command: F) -> F:
        own = [p for name, p in inspect.signature(command, eval_str=True).parameters.items() if name != "training"]
        added = _options(gpus, default_sharding)
        names = {p.name for p in added}

        def wrapper(**kwargs: Any) -> Any:
            training = TrainingRequest(**{k: kwargs.pop(k) for k in list(kwargs) if k in names})
            return command(training=training, **kwargs)

        wrapper.__name__ = command.__name__
        wrapper.__qualname__ = command.__qualname__
        wrapper.__doc__ = command.__doc__
        wrapper.__module__ = command.__module__
        params = [*added, *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own)]
        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper  # type: ignore[return-value]

    return decorate


def model_of(training: TrainingRequest) -> Any:
    """The request's model architecture; a name read as another table entry (an instruct variant
    as its base) is said on stderr, once."""
    from gpucat.cli._common import cli_settings

    arch = training.arch(settings=cli_settings())
    note = training.model_note(arch)
    if note:
        typer.echo(f"note: {note}", err=True)
    return arch
