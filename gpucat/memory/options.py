"""Turning the training options a user gave into a model and `TrainSettings`, with one-line errors.

Shared by `gpucat memory`, `gpucat fit` and `gpucat cost` through `TrainingRequest`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpucat.memory.archs import LORA_TARGET_PRESETS, ModelArch
from gpucat.memory.settings import TrainSettings, quantity, validate_settings
from gpucat.schemas.errors import SettingError

if TYPE_CHECKING:
    import httpx

    from gpucat.schemas.settings import Settings


def model_from_options(
    *,
    model: str | None,
    config: str | Path | None,
    allow_hub: bool = True,
    client_factory: Callable[[], httpx.Client] | None = None,
    settings: Settings | None = None,
) -> ModelArch:
    """Exactly one of a model name (table or Hub repo id) and a config.json path (`settings`: the
    caller's, for the Hub's cache folder and offline mode)."""
    from gpucat.memory.hf_config import load_config_file, resolve_model

    if (model is None) == (config is None):
        raise SettingError("give exactly one of {model} NAME and {config} path/to/config.json",
                           model=quantity("model"), config=quantity("config"))
    if config is not None:
        return load_config_file(config)
    return resolve_model(model, allow_hub=allow_hub, client_factory=client_factory, settings=settings)  # type: ignore[arg-type]


# Other tools' spellings of the same choices, matched after lower-casing. Precision: Lightning's
# Trainer names (`bf16` is its deprecated alias of `bf16-mixed`, Lightning discussion #18263;
# `16-mixed`, `32-true`) and Hugging Face's bf16=True / fp16=True (mixed precision). Optimizer:
# Hugging Face TrainingArguments.optim names (transformers OptimizerNames: `adamw_torch`,
# `adamw_bnb_8bit` and its alias `adamw_8bit`, `paged_adamw_8bit`, ...).
CHOICE_ALIASES: dict[str, dict[str, str]] = {
    "precision": {"bf16": "bf16-mixed", "fp16": "fp16-mixed", "16": "fp16-mixed", "16-mixed": "fp16-mixed",
                  "32": "fp32", "32-true": "fp32", "float32": "fp32", "bf16-true": "bf16-true"},
    "optimizer": {"adamw_torch": "adamw", "adamw_torch_fused": "adamw", "adamw_hf": "adamw", "adamw_apex_fused": "adamw",
                  "adam": "adamw", "adamw_bnb_8bit": "adamw-8bit", "adamw_8bit": "adamw-8bit", "adamw8bit": "adamw-8bit",
                  "paged_adamw_8bit": "paged-adamw-8bit"},
}  # fmt: skip


def canonical_choice(option: str, value: str | None) -> str | None:
    """A choice as gpucat spells it: any case, other tools' aliases, `_` for `-`. Unknown values pass
    through unchanged, for the validator to refuse with the list of choices."""
    if value is None:
        return None
    lowered = value.strip().lower()
    aliases = CHOICE_ALIASES.get(option, {})
    return aliases.get(lowered) or aliases.get(lowered.replace("-", "_")) or lowered.replace("_", "-")


@dataclass(frozen=True)
class TrainingRequest:
    """A fine-tuning run as the user asked for it: the model and every training option, typed.

    The one definition of these options is `gpucat/cli/_train_options.py`, which builds this for
    `gpucat memory`, `gpucat fit` and `gpucat cost`. None means "not given" for the adapter
    options, so `--lora-rank` with `--method full` is an error rather than silently ignored.
    """

    model: str | None = None
    config: Path | None = None
    offline: bool = False
    method: str | None = None
    precision: str = "bf16-true"
    optimizer: str = "adamw"
    optimizer_impl: str = "foreach"
    lora_rank: int | None = None
    lora_targets: str | None = None
    lora_dropout: float | None = None
    quant: str | None = None
    batch: int = 1
    seq_len: int = 2048
    target_len: int | None = None
    grad_checkpointing: bool = True
    attention: str = "flash"
    cross_entropy: str = "standard"
    grad_accum: int = 1
    gpus: int = 1
    sharding: str = "none"
    offload: str = "none"
    offload_activations: bool = False
    optimizer_in_backward: bool = False
    peft_upcast: str | None = None  # "on" | "off"; None: PEFT's fp32 upcast assumed for qlora
    bitsandbytes: str = "current"

    def arch(self, client_factory: Callable[[], httpx.Client] | None = None, settings: Settings | None = None) -> ModelArch:
        return model_from_options(model=self.model, config=self.config, allow_hub=not self.offline, client_factory=client_factory,
                                  settings=settings)

    def model_note(self, arch: ModelArch) -> str | None:
        """A line saying which table entry a model name was read as, when it is not that entry's own
        name: a Hugging Face instruct or chat variant reads as its base model (same architecture)."""
        if self.model is None or self.model.strip().lower() in (arch.name.lower(), arch.alias.lower()):
            return None
        return f"{self.model} read as {arch.name} ({arch.alias}): a variant with the same architecture"

    def canonical(self) -> TrainingRequest:
        """The request with every choice spelled as gpucat spells it (`QLoRA`, `bf16`, `paged_adamw_8bit`)."""
        from dataclasses import replace

        names = ("method", "precision", "optimizer", "lora_targets", "quant", "attention", "cross_entropy", "sharding", "offload")
        spelled: dict[str, Any] = {n: canonical_choice(n, getattr(self, n)) for n in names}
        return replace(self, **spelled)

    def settings(self, arch: ModelArch) -> TrainSettings:
        """`TrainSettings` for this request; a bad value or combination is one `SettingError` line."""
        self = self.canonical()  # noqa: PLW0642 - the same request, spelled canonically
        method = quantity("method")
        if self.method is None:
            raise SettingError("{method} is required: full, lora or qlora", method=method)
        if self.method == "full":
            given = {f"given{i}": quantity(key) for i, key in enumerate(("lora_rank", "lora_targets", "lora_dropout"))
                     if getattr(self, key) is not None}
            if given:
                raise SettingError(", ".join(f"{{{name}}}" for name in given) + " applies to {method} lora or qlora, not full",
                                   **given, method=method)
        for key in ("quant", "peft_upcast"):
            if getattr(self, key) is not None and self.method != "qlora":
                raise SettingError("{q} applies to {method} qlora", q=quantity(key), method=method)
        for key, allowed in (("peft_upcast", (None, "on", "off")), ("bitsandbytes", ("current", "old")),
                             ("lora_targets", (None, *LORA_TARGET_PRESETS))):
            if getattr(self, key) not in allowed:
                raise SettingError("{q} must be one of {allowed}, got {value!r}", q=quantity(key),
                                   allowed=", ".join(a for a in allowed if a is not None), value=getattr(self, key))
        defaults = TrainSettings()
        settings = TrainSettings(
            method=self.method,  # type: ignore[arg-type]  # checked by validate_settings
            precision=self.precision,  # type: ignore[arg-type]
            optimizer=self.optimizer,  # type: ignore[arg-type]
            optimizer_impl=self.optimizer_impl,  # type: ignore[arg-type]
            lora_rank=self.lora_rank if self.lora_rank is not None else defaults.lora_rank,
            lora_targets=self.lora_targets if self.lora_targets is not None else defaults.lora_targets,
            lora_dropout=self.lora_dropout if self.lora_dropout is not None else defaults.lora_dropout,
            quant=self.quant if self.quant is not None else defaults.quant,  # type: ignore[arg-type]
            batch_size=self.batch,
            seq_len=self.seq_len,
            target_len=self.target_len,
            grad_checkpointing=self.grad_checkpointing,
            attention=self.attention,  # type: ignore[arg-type]
            cross_entropy=self.cross_entropy,  # type: ignore[arg-type]
            grad_accumulation=self.grad_accum,
            gpus=self.gpus,
            sharding=self.sharding,  # type: ignore[arg-type]
            offload=self.offload,  # type: ignore[arg-type]
            offload_activations=self.offload_activations,
            optimizer_in_backward=self.optimizer_in_backward,
            peft_upcast=self.peft_upcast == "on" if self.peft_upcast is not None else defaults.peft_upcast,
            bnb_keeps_4bit_inputs=self.bitsandbytes == "old",
        )
        validate_settings(arch, settings)
        return settings
