"""GPU names as people type them: canonical models, families, and SkyPilot's and dstack's forms.

`--gpu` takes a canonical model (`H100-SXM`), a family (`H100`), or the spellings other tools
use: a memory suffix (`A100-80GB`, `H100-80GB`: the family's models with that much memory), no
separators (`RTX4090`), the bare number of a GeForce card (`4090`), and SkyPilot's `NAME:COUNT`
(`H100:8`), where the count also asks for that many GPUs. Anything else is refused with the
nearest known names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gpucat.schemas.errors import UserInputError
from gpucat.suggest import unknown_message

_MEMORY = re.compile(r"^(?P<name>.+?)[-_ ]+(?P<gb>\d+)\s*gb$")


@dataclass(frozen=True)
class GpuChoice:
    """What one `--gpu` value asks for: canonical models or families (as the catalog spells them)
    and, from `NAME:COUNT`, a GPU count."""

    typed: str
    names: tuple[str, ...]
    count: int | None = None


def _key(text: str) -> str:
    return re.sub(r"[\s\-_]", "", text.lower())


def resolve_gpu(typed: str) -> GpuChoice:
    from gpucat.schemas.reference import gpu_models

    models = list(gpu_models().values())
    text, count = typed.strip(), None
    if ":" in text:  # SkyPilot's accelerator:count
        text, _, raw = text.partition(":")
        if not raw.strip().isdigit() or int(raw) < 1:
            raise UserInputError(f"--gpu {typed!r}: the count after ':' must be a whole number of GPUs, e.g. H100:8")
        count = int(raw)
    by_key: dict[str, list[str]] = {}
    for g in models:
        by_key.setdefault(_key(g.gpu_model), []).append(g.gpu_model)
        by_key.setdefault(_key(g.family), []).append(g.family)
    key = _key(text)
    for candidate in (key, "rtx" + key, key.removeprefix("nvidia").removeprefix("geforce")):
        if candidate in by_key:
            return GpuChoice(typed, tuple(dict.fromkeys(by_key[candidate])), count)
    memory = _MEMORY.match(text.strip().lower())
    if memory:
        family = _key(memory["name"])
        wanted = [g.gpu_model for g in models
                  if family in (_key(g.family), "rtx" + _key(g.family).removeprefix("rtx")) and g.memory_gb == float(memory["gb"])]
        if wanted:
            return GpuChoice(typed, tuple(wanted), count)
    known = {g.gpu_model for g in models} | {g.family for g in models}
    raise UserInputError(unknown_message("GPU model or family", text, known))


def resolve_gpus(typed: Iterable[str]) -> tuple[tuple[str, ...], int | None]:
    """Every name the values ask for, and the one GPU count they set (if any)."""
    choices = [resolve_gpu(t) for t in typed]
    counts = {c.count for c in choices if c.count is not None}
    if len(counts) > 1:
        raise UserInputError(f"--gpu asks for different GPU counts ({', '.join(map(str, sorted(counts)))}); give one")
    names = tuple(dict.fromkeys(n for c in choices for n in c.names))
    return names, (counts.pop() if counts else None)
