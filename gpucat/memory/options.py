"""Turning command-line options into a model and `TrainSettings`, with one-line errors.

Shared by `gpucat memory` and any command that takes the same training options (`gpucat fit`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from schemas.errors import UserInputError
from gpucat.memory.archs import LORA_TARGET_PRESETS, ModelArch
from gpucat.memory.settings import TrainSettings, validate_settings

if TYPE_CHECKING:
    import httpx


def model_from_options(
    *,
    model: str | None,
    config: str | Path | None,
    allow_hub: bool = True,
    client_factory: Callable[[], httpx.Client] | None = None,
) -> ModelArch:
    """Exactly one of a model name (table or Hub repo id) and a config.json path."""
    from gpucat.memory.hf_config import load_config_file, resolve_model

    if (model is None) == (config is None):
        raise UserInputError("give exactly one of --model NAME and --config path/to/config.json")
    if config is not None:
        return load_config_file(config)
    return resolve_model(model, allow_hub=allow_hub, client_factory=client_factory)  # type: ignore[arg-type]


def settings_from_options(
    arch: ModelArch,
    *,
    method: str | None,
    lora_rank: int | None = None,
    lora_targets: str | None = None,
    lora_dropout: float | None = None,
    quant: str | None = None,
    **options: object,
) -> TrainSettings:
    """`TrainSettings` from option values; adapter options are refused with --method full.

    Remaining keyword options are `TrainSettings` fields passed through unchanged; their values
    are checked by `estimate_memory`.
    """
    if method is None:
        raise UserInputError("--method is required: full, lora or qlora")
    if method == "full":
        given = [flag for flag, value in (("--lora-rank", lora_rank), ("--lora-targets", lora_targets),
                                          ("--lora-dropout", lora_dropout)) if value is not None]
        if given:
            raise UserInputError(f"{', '.join(given)} applies to --method lora or qlora, not full")
    if quant is not None and method != "qlora":
        raise UserInputError("--quant applies to --method qlora")
    if lora_targets is not None and lora_targets not in LORA_TARGET_PRESETS:
        raise UserInputError(
            f"--lora-targets must be one of {', '.join(LORA_TARGET_PRESETS)}, got {lora_targets!r}"
        )
    values: dict[str, object] = {"method": method, **options}
    if lora_rank is not None:
        values["lora_rank"] = lora_rank
    if lora_targets is not None:
        values["lora_targets"] = lora_targets
    if lora_dropout is not None:
        values["lora_dropout"] = lora_dropout
    if quant is not None:
        values["quant"] = quant
    settings = TrainSettings(**values)  # type: ignore[arg-type]
    validate_settings(arch, settings)
    return settings
