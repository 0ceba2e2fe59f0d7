"""Rules that map a provider's GPU wording onto a canonical `gpu_model`, shared by parsers.

Parsers keep their reviewed tables for names the rules cannot settle (a provider's own spelling
of a form factor, a name that means one card there and another elsewhere). What the tables do
not name goes through these rules, which read the reference table instead of a list of strings:

- **Vendor grammar.** A name is a family ("H100", "Quadro RTX 6000", "P4") wrapped in vendor
  words ("NVIDIA", "Tesla", "GeForce", "AMD Instinct", "AMD Radeon", "Ada Generation"), optional memory
  ("80GB", "80 GB", "(24 GB)") and an optional form factor ("SXM5", "PCIe", "NVL", "HGX");
  spacing, case, hyphens and underscores do not matter, and a vendor word glued to the model
  ("geforcertx3080", "nvidia_a16") is still a vendor word. Marketing and architecture words
  ("Tensor Core GPU", "Blackwell Ultra", "Grace Hopper"), a GPU count before the name ("8x"),
  and the host after "with" ("L40S with Intel CPU") name no model; "HGX" and "DGX" say SXM,
  "Superchip" the superchip (whose GPU a seller may call "SXM": "GH200 SXM"); the RTX PRO 6000's
  editions may be spelled "Workstation Edition"/"WS" (the catalog's standard board), "Server
  Edition"/"S" or "Max-Q".
- **Words sellers drop.** Some sellers leave out a word of the canonical family ("RTX 6000" for
  the Quadro RTX 6000, "A6000" for the RTX A6000, "Q RTX 8000" for the Quadro RTX 8000). A name
  that matches a family only once those words (`OPTIONAL_WORDS`) are dropped from both sides
  maps only when the memory stated beside it confirms one nameplate: "RTX 6000" alone could be
  the 24 GB Turing Quadro or the 48 GB RTX 6000 Ada.
- **Usable vs nameplate memory.** A reported memory fits a nameplate when it lies within
  [`USABLE_LOW`, `USABLE_HIGH`] times it: drivers report less than the box says (ECC, reserved
  memory: Vast lists a B300's usable MiB well below 288 GB) or more (an "80 GB" H100 is 80 GiB,
  85.9 GB). Where that range admits two nameplates (85.9 GB fits 80 and 94), a figure that is
  one nameplate exactly, in GB or GiB, names it. A memory variant with its own row
  (RTX-4060-Ti-16GB) is chosen by its memory, never assumed when no memory is said.
- **One candidate or none.** The family (and the form factor and memory, when stated) must
  leave exactly one row of `gpu_models`. Where two are left (H200 SXM or NVL), the provider's own
  documentation settles the form factor when it says it (`schemas/reference/gpu_form_defaults.csv`,
  one cited row per provider and family), else the stand-in below; candidates that differ in
  memory ("H100" alone: 80 or 94 GB) are ambiguous and the offer is rejected naming them.
- **Unstated, not guessed.** When the candidates left differ only in what the seller did not
  say (one family, one memory, the form factor or the edition unnamed: OVH's "H100" with 80 GB,
  Modal's "Nvidia H200") and no cited default settles it, the offer maps to the family's
  stand-in row (`H100-80GB-AnyForm`, `RTX-PRO-6000-AnyEdition`): its memory is the one every
  candidate shares, so fit is exact; its bandwidth and TFLOPS are the lowest of the candidates
  and it claims no NVLink, so cost never flatters it; and its form factor is "Unstated", so no
  row whose form factor a seller does state is ever merged with it. A name that states its form
  factor never reaches a stand-in; candidates of different memory stay `ambiguous_gpu`.
- **Not a whole GPU, or not a GPU.** A MIG slice ("… MIG 1g.24gb") is a fraction of one GPU that
  `gpu_models` has no row for: rejected `mig_slice`, never counted as the whole card. An
  accelerator of a maker `gpu_models` does not carry (Tenstorrent's Grayskull and Wormhole
  cards, which run Tenstorrent's own software stack rather than CUDA or ROCm) is rejected
  `not_a_gpu`, so a catalog of GPUs neither drops it silently nor lists it as one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from gpucat.schemas.reference import GpuModel, gpu_form_defaults, gpu_models

USABLE_LOW = 0.88
USABLE_HIGH = 1.10
MIB_GB = 1.048576  # 1 MiB in MB: GB here are 10^9 bytes
_GIB = 1.073741824  # 1 GiB in GB

# Words that name the vendor, line or generation around a model, not the model: "NVIDIA RTX PRO
# 6000 Blackwell Server Edition" is the catalog's RTX-PRO-6000-Server.
# Marketing and architecture words ("NVIDIA H100 Tensor Core GPU", "NVIDIA Blackwell Ultra B300",
# "GH200 Grace Hopper Superchip") name no model either. "Radeon" is AMD's line as "GeForce" is NVIDIA's:
# Vast sells "PRO W7900" and "Pro V620" for AMD's "Radeon PRO W7900" and "Radeon PRO V620".
_VENDOR_WORDS = {
    "nvidia", "tesla", "amd", "instinct", "geforce", "radeon", "intel", "generation", "edition", "blackwell", "ultra", "hopper",
    "grace", "ampere", "volta", "turing", "pascal", "lovelace", "tensor", "core", "gpu", "gpus", "accelerator",
}
# "Workstation Edition" is the RTX PRO 6000's standard board (the catalog's `RTX-PRO-6000`): a name
# that says it picks the family's row without an edition, where Server and Max-Q are their own rows.
_WORKSTATION = re.compile(r"\bworkstation\b|\bpro\s*6000\s+ws\b", re.IGNORECASE)
# Vast's abbreviations of the RTX PRO 6000 editions: "RTX PRO 6000 WS" (Workstation) and "RTX PRO
# 6000 S" (Server); a lone "S" after any other model is no word of it.
_EDITION_ABBREVIATIONS = {"ws": "workstation", "s": "server"}
# What follows "with" describes the machine around the GPU ("NVIDIA L40S with Intel CPU", Nebius).
_HOST_CLAUSE = re.compile(r"\bwith\b.*$", re.IGNORECASE | re.DOTALL)
_GLUED_LINE = re.compile(r"^(rtx)(\d{4})$")
# A GPU count before the name ("8x H100", "8 x H200"): how many, not which.
_COUNT = re.compile(r"^\d+x$")
# Vendor words a seller may glue onto the model ("geforcertx3080-pcie-10gb", TensorDock's ids).
_GLUED_VENDOR = re.compile(r"^(?:nvidia|geforce|tesla|amd|instinct)(?=[a-z]*\d)")
# A model number with "S" glued on is the SUPER card ("RTX 4080S", "RTX 4070S Ti"), as sellers
# abbreviate NVIDIA's "GeForce RTX 4080 SUPER".
_SUPER = re.compile(r"^(\d{4})s$")
# ...and so is a lone "S" after a GeForce model number ("GTX 1660 S", "GTX 1650 S", as Vast writes them).
_GEFORCE_NUMBER = re.compile(r"^(?:gtx|rtx) \d{4}$")
# Words of a canonical family that sellers drop; a match without them needs the memory to agree.
OPTIONAL_WORDS = frozenset({"quadro", "q", "rtx", "ada"})
_FORMS = {
    "sxm": "SXM", "sxm2": "SXM", "sxm4": "SXM", "sxm5": "SXM", "sxm6": "SXM", "hgx": "SXM", "dgx": "SXM",
    "pcie": "PCIe", "pci": "PCIe", "nvl": "NVL", "oam": "OAM", "superchip": "Superchip",
}
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*(gb|gib|g)$")
# Memory technology, as nvidia-smi names a board ("NVIDIA H100 80GB HBM3"): it narrows the rows
# by `memory_type` when that leaves any, and is otherwise no part of the family.
_RACK = re.compile(r"^nvl\d+$")
_MEMORY_TYPE = re.compile(r"^(?:hbm\d?e?|g?ddr\d+x?)$")
_TOKEN = re.compile(r"\d+(?:\.\d+)?\s*gi?b\b|[a-z0-9]+", re.IGNORECASE)
# "MIG 1g.24gb", "MIG 3g.40gb": NVIDIA's profile grammar (slices of compute "g" and memory "gb").
_MIG = re.compile(r"\bmig\b|\b\d+g\.\d+gb\b", re.IGNORECASE)
# Makers of accelerators that gpu_models does not carry (see the module docstring).
_NOT_GPU_MAKERS = re.compile(r"\btenstorrent\b|\bgrayskull\b|\bwormhole\b|\bblackhole\b", re.IGNORECASE)
# Stand-in rows of gpu_models: a family and memory whose form factor or edition went unsaid.
_STAND_IN = re.compile(r"-Any(?:Form|Edition)$")
UNSTATED = "Unstated"


@dataclass(frozen=True)
class Wording:
    """What a GPU name says: its family key, and the memory and form factor it states."""

    family: str
    memory_gb: float | None
    form_factor: str | None
    words: tuple[str, ...] = ()
    memory_type: str | None = None


# Every resolve reads the words of each gpu_models row's name and family again: a refresh asked
# for the same few hundred names hundreds of thousands of times (a fifth of its parsing). Pure.
@lru_cache(maxsize=4096)
def words(name: str) -> Wording:
    family: list[str] = []
    memory = form = memory_type = None
    for token in _TOKEN.findall(_HOST_CLAUSE.sub("", name).casefold().replace("_", " ")):
        token = _GLUED_VENDOR.sub("", token)
        if token in _EDITION_ABBREVIATIONS and family[-3:] == ["rtx", "pro", "6000"]:
            token = _EDITION_ABBREVIATIONS[token]
        if not token or token in _VENDOR_WORDS or token == "workstation" or (_COUNT.match(token) and not family):
            continue
        if (m := _SUPER.match(token)) is not None:  # "RTX 4080S": the 4080 SUPER
            family += [m[1], "super"]
            continue
        if token == "s" and _GEFORCE_NUMBER.match(" ".join(family[-2:])):  # Vast's "GTX 1660 S": the SUPER
            token = "super"
        if (m := _MEMORY.match(token)) is not None and memory is None:
            memory = float(m[1]) * (_GIB if m[2] == "gib" else 1.0)
        elif token in _FORMS:
            form = _FORMS[token]
        elif _MEMORY_TYPE.match(token):
            memory_type = token
        elif _RACK.match(token):
            continue  # "GB200 NVL72": the rack's NVLink domain, not the chip's form factor
        else:
            family.append(token)
    return Wording("".join(family), memory, form, tuple(family), memory_type)


def _edition(model: GpuModel) -> bool:
    """Whether a row is one edition of its family's board (`V100-FHHL-16GB`, `T4G`,
    `RTX-PRO-6000-Server`): its name says more than its family, form factor and memory."""
    return words(model.gpu_model).family != words(model.family).family


def is_stand_in(model: GpuModel) -> bool:
    """Whether a row stands for a card whose form factor or edition the seller left unsaid."""
    return _STAND_IN.search(model.gpu_model) is not None


def _stand_in_for(candidates: list[GpuModel]) -> str | None:
    """The stand-in row for candidates that share family and memory and differ only in form
    factor (an `Unstated` stand-in) or only in edition (a stand-in of their one form factor)."""
    if not candidates or len({(m.family, m.memory_gb) for m in candidates}) != 1:
        return None
    forms = {m.form_factor for m in candidates}
    wanted = UNSTATED if len(forms) > 1 else forms.pop()
    found = [
        m.gpu_model for m in gpu_models().values()
        if is_stand_in(m) and m.family == candidates[0].family and m.memory_gb == candidates[0].memory_gb and m.form_factor == wanted
    ]
    return found[0] if len(found) == 1 else None


def fits_nameplate(reported_gb: float, nameplate_gb: float) -> bool:
    """Whether a reported memory can be this nameplate's usable memory."""
    return nameplate_gb * USABLE_LOW <= reported_gb <= nameplate_gb * USABLE_HIGH


def _same_family(model: GpuModel, said: Wording) -> bool:
    """The name's words are the family's: run together ("PRO6000", "geforcertx3080") or in
    another order ("RTX 4070S Ti" for the RTX 4070 Ti SUPER)."""
    family = words(model.family)
    return family.family == said.family or _order_free(family.words) == _order_free(said.words)


def _order_free(tokens: tuple[str, ...] | list[str]) -> str:
    """A family's words in a fixed order: "RTX 4070S Ti" and "RTX 4070 Ti SUPER" say the same."""
    return " ".join(sorted(_split_optional(tuple(tokens))))


def _loose_key(tokens: tuple[str, ...]) -> str:
    return _order_free([t for t in _split_optional(tokens) if t not in OPTIONAL_WORDS])


def _split_optional(tokens: tuple[str, ...]) -> list[str]:
    """Tokens with a glued trailing "ada" or a glued leading "rtx" split off ("6000ada" -> "6000",
    "ada"; "rtx5000" -> "rtx", "5000")."""
    out: list[str] = []
    for t in tokens:
        if t.endswith("ada") and t[:-3].isdigit():
            out += [t[:-3], "ada"]
        elif (glued := _GLUED_LINE.match(t)) is not None:  # "RTX5000" (Jarvislabs): "RTX 5000"
            out += [glued[1], glued[2]]
        else:
            out.append(t)
    return out


def resolve(name: str, *, provider: str, memory_gb: float | None = None, form_factor: str | None = None) -> str:
    """The canonical model a GPU name (with the memory and form factor stated beside it) means.

    Candidates that differ only in an unstated form factor or edition map to their stand-in row.
    Raises `LookupError` with the reason (`unknown_gpu`, `ambiguous_gpu`, `memory_mismatch`,
    `mig_slice` or `not_a_gpu`, then what was said) when the rules leave no single model.
    """
    if _MIG.search(name):
        raise LookupError(f"mig_slice: {name!r} is a MIG slice of one GPU, not a whole GPU; gpu_models has no MIG profiles")
    if _NOT_GPU_MAKERS.search(name):
        raise LookupError(f"not_a_gpu: {name!r} is a Tenstorrent accelerator, which gpu_models does not carry")
    said = words(name)
    models = [m for m in gpu_models().values() if not is_stand_in(m)]
    exact = [m for m in models if said.family and _edition(m) and words(m.gpu_model) == said]
    # the catalog's own spelling, edition included ("Tesla V100-FHHL-16GB"), if the memory agrees
    if len(exact) == 1 and (memory_gb is None or fits_nameplate(memory_gb, exact[0].memory_gb)):
        return exact[0].gpu_model
    memory = memory_gb if memory_gb is not None else said.memory_gb
    form = form_factor or said.form_factor
    family = [m for m in models if _same_family(m, said)]
    loose = False
    if not family and said.family:
        key = _loose_key(said.words)
        family = [m for m in models if key and _loose_key(words(m.family).words) == key]
        loose = bool(family)
    # A superchip's GPU sits on an SXM-style module: "GH200 SXM" (Vast) names the only GH200 there is.
    candidates = [m for m in family if form is None or m.form_factor == form or (form == "SXM" and m.form_factor == "Superchip")]
    if memory is not None:
        candidates = [m for m in candidates if fits_nameplate(memory, m.memory_gb)]
    if memory is not None and len({m.memory_gb for m in candidates}) > 1:
        # Several nameplates within the usable range (85.9 GB fits 80 and 94): a figure that is one
        # nameplate exactly, in GB or in GiB (an 80 GB card's 80 GiB), names that one.
        candidates = [m for m in candidates if any(abs(memory - m.memory_gb * k) <= 0.005 * m.memory_gb * k for k in (1.0, _GIB))] or candidates
    if said.memory_type is not None:
        candidates = [m for m in candidates if m.memory_type.casefold() == said.memory_type] or candidates
    # A name that states no edition means the family's standard board when one special edition
    # stands beside it (V100 PCIe vs the FHHL board, T4 vs AWS's T4G); a family that NVIDIA sells
    # in several named editions (RTX PRO 6000: Workstation, Max-Q, Server) needs the edition said.
    if sum(_edition(m) for m in candidates) == 1 or (_WORKSTATION.search(name) and len(candidates) > 1):
        candidates = [m for m in candidates if not _edition(m)] or candidates
    # Likewise a memory variant whose row names its memory (RTX-4060-Ti-16GB) is never assumed for a
    # name that states none: the family's launch row (RTX-4060-Ti, 8 GB) is, the smaller card.
    if memory is None and len(candidates) > 1 and len({(m.family, m.form_factor) for m in candidates}) == 1:
        candidates = [m for m in candidates if words(m.gpu_model).memory_gb is not None] and [
            m for m in candidates if words(m.gpu_model).memory_gb is None
        ] or candidates
    if len(candidates) == 1 and (not loose or memory is not None):
        return candidates[0].gpu_model
    if not family:
        raise LookupError(f"unknown_gpu: {name!r}")
    if not candidates:
        stated = ", ".join(x for x in (form, f"{memory:g} GB" if memory is not None else None) if x)
        raise LookupError(f"memory_mismatch: {name!r} with {stated} fits none of {', '.join(sorted(m.gpu_model for m in family))}")
    default = gpu_form_defaults().get((provider, said.family))
    if default is not None and default in {m.gpu_model for m in candidates}:
        return default
    if not loose or memory is not None:
        stand_in = _stand_in_for(candidates)
        if stand_in is not None:
            return stand_in
    if loose and len(candidates) == 1:
        raise LookupError(f"ambiguous_gpu: {name!r} omits words of {candidates[0].family!r} and states no memory to confirm it")
    raise LookupError(f"ambiguous_gpu: {name!r} could be {', '.join(sorted(m.gpu_model for m in candidates))}")


def mapped(
    table: Mapping[str, str], name: str, *, provider: str, memory_gb: float | None = None, key: str | None = None
) -> tuple[str | None, str | None]:
    """A parser's reviewed table first (looked up by `key`, default `name`), then the rules:
    `(model, None)`, or `(None, reason)` for the rejection, so a name neither settles is rejected
    with the rules' reason, never dropped."""
    if (key if key is not None else name) in table:
        return table[key if key is not None else name], None
    try:
        return resolve(name, provider=provider, memory_gb=memory_gb), None
    except LookupError as exc:
        return None, str(exc)
