"""Rules that map a provider's GPU wording onto a canonical `gpu_model`, shared by parsers.

Parsers keep their reviewed tables for names the rules cannot settle (a provider's own spelling
of a form factor, a name that means one card there and another elsewhere). What the tables do
not name goes through these rules, which read the reference table instead of a list of strings:

- **Vendor grammar.** A name is a family ("H100", "Quadro RTX 6000", "P4") wrapped in vendor
  words ("NVIDIA", "Tesla", "AMD Instinct"), optional memory ("80GB", "80 GB") and an optional
  form factor ("SXM5", "PCIe", "NVL", "HGX"); spacing, case and hyphens do not matter.
- **Usable vs nameplate memory.** A reported memory fits a nameplate when it lies within
  [`USABLE_LOW`, `USABLE_HIGH`] times it: drivers report less than the box says (ECC, reserved
  memory: Vast lists a B300's usable MiB well below 288 GB) or more (an "80 GB" H100 is 80 GiB,
  85.9 GB).
- **One candidate or none.** The family (and the form factor and memory, when stated) must
  leave exactly one row of `gpu_models`; two candidates (H200 SXM or NVL) are ambiguous and the
  offer is rejected naming them, unless the provider's own documentation settles the form
  factor: `schemas/reference/gpu_form_defaults.csv`, one cited row per provider and family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpucat.schemas.reference import gpu_form_defaults, gpu_models

USABLE_LOW = 0.88
USABLE_HIGH = 1.10
MIB_GB = 1.048576  # 1 MiB in MB: GB here are 10^9 bytes

_VENDOR_WORDS = {"nvidia", "tesla", "amd", "instinct", "geforce", "intel"}
_FORMS = {"sxm": "SXM", "sxm2": "SXM", "sxm4": "SXM", "sxm5": "SXM", "sxm6": "SXM", "hgx": "SXM", "pcie": "PCIe", "pci": "PCIe", "nvl": "NVL", "oam": "OAM"}
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*(gb|gib)$")
_TOKEN = re.compile(r"\d+(?:\.\d+)?\s*gi?b\b|[a-z0-9]+", re.IGNORECASE)


@dataclass(frozen=True)
class Wording:
    """What a GPU name says: its family key, and the memory and form factor it states."""

    family: str
    memory_gb: float | None
    form_factor: str | None


def words(name: str) -> Wording:
    family: list[str] = []
    memory = form = None
    for token in _TOKEN.findall(name.casefold()):
        if token in _VENDOR_WORDS:
            continue
        if (m := _MEMORY.match(token)) is not None:
            memory = float(m[1]) * (1.073741824 if m[2] == "gib" else 1.0)
        elif token in _FORMS:
            form = _FORMS[token]
        else:
            family.append(token)
    return Wording("".join(family), memory, form)


def fits_nameplate(reported_gb: float, nameplate_gb: float) -> bool:
    """Whether a reported memory can be this nameplate's usable memory."""
    return nameplate_gb * USABLE_LOW <= reported_gb <= nameplate_gb * USABLE_HIGH


def _family_key(family: str) -> str:
    return "".join(_TOKEN.findall(family.casefold()))


def resolve(name: str, *, provider: str, memory_gb: float | None = None, form_factor: str | None = None) -> str:
    """The canonical model a GPU name (with the memory and form factor stated beside it) means.

    Raises `LookupError` with the reason (`unknown_gpu: …` or `ambiguous_gpu: …`) when the rules
    leave no single model.
    """
    said = words(name)
    memory = memory_gb if memory_gb is not None else said.memory_gb
    form = form_factor or said.form_factor
    family = [m for m in gpu_models().values() if _family_key(m.family) == said.family]
    candidates = [m for m in family if form is None or m.form_factor == form]
    if memory is not None:
        candidates = [m for m in candidates if fits_nameplate(memory, m.memory_gb)]
    if len(candidates) == 1:
        return candidates[0].gpu_model
    if not family:
        raise LookupError(f"unknown_gpu: {name!r}")
    if not candidates:
        stated = ", ".join(x for x in (form, f"{memory:g} GB" if memory is not None else None) if x)
        raise LookupError(f"memory_mismatch: {name!r} with {stated} fits none of {', '.join(sorted(m.gpu_model for m in family))}")
    default = gpu_form_defaults().get((provider, said.family))
    if default is not None and default in {m.gpu_model for m in candidates}:
        return default
    raise LookupError(f"ambiguous_gpu: {name!r} could be {', '.join(sorted(m.gpu_model for m in candidates))}")
