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


def _options(gpus: bool, default_sharding: str) -> list[inspect.Parameter]:
    """The typer parameters, in help order; names match `TrainingRequest` fields."""
    defaults = TrainingRequest()
    spec: list[tuple[str, Any]] = [
        ("model", ModelOption), ("config", ConfigOption), ("method", MethodOption), ("precision", PrecisionOption),
        ("optimizer", OptimizerOption), ("lora_rank", LoraRankOption), ("lora_targets", LoraTargetsOption),
        ("lora_dropout", LoraDropoutOption), ("quant", QuantOption), ("batch", BatchOption), ("seq_len", SeqLenOption),
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
