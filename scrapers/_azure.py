"""Azure VM size names decoded by their naming grammar, with a reviewed table of the exceptions.

An ARM SKU name reads `Standard_<family><vCPUs>[-<constrained>]<features>[_<token>...][_v<version>]`:
`Standard_ND96isr_H100_v5` is family ND, 96 vCPUs, additive features `isr` (i: isolated, s: premium
storage, r: RDMA), the GPU family token `H100`, version 5. Families starting with N are GPU
families (NC compute, ND deep learning, NV visualisation, NG gaming; NP is FPGA); any other family
(D, E, F, M, HB, ...) is not a GPU offer. The token names the GPU and the family its form factor
(H100 in ND is SXM, in NC/NCC the NVL card); a memory token (`80GB`) picks the A100 variant, as
does the `m` feature of ND A100 v4. Names are matched case-insensitively (the API has
`Standard_NC40ADS_H100_V5`-style spellings) and tokens that name no GPU (`xl`, `NDR`) are ignored.

The reviewed tables hold what the name does not say: the GPU of series without a token (NC v3 is
V100 16GB, ND v2 V100 32GB, ND v4 A100 40GB), and per series how many vCPUs come with one GPU
(NC A100 v4: 24) or, where sizes are irregular, the GPUs of each size (NCas T4 v3, the RTX PRO
6000 Blackwell Server Edition v6 sizes). Sources: the Azure size pages in
MicrosoftDocs/azure-compute-docs `articles/virtual-machines/sizes/gpu-accelerated/*-series.md`, and
for sizes those pages do not list yet, the Resource SKUs list in microsoft/aspire
`src/Aspire.Hosting.Azure.Kubernetes/AksNodeVmSizes.Generated.cs` (2026-08-21). A GPU size whose
count the tables do not know is `unknown_gpu_count`; a GPU family they cannot place is
`unknown_gpu`: both are rejected with the name, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

_SKU = re.compile(
    r"^Standard_(?P<family>[A-Z]+?)(?P<vcpus>\d+)(?:-\d+)?(?P<features>[A-Z0-9]*?)(?P<tokens>(?:_[A-Z0-9]+)*?)(?:_V(?P<version>\d+))?$",
    re.IGNORECASE,
)
_MEMORY_TOKEN = re.compile(r"^(\d+)GB$")
# Tokens in GPU SKU names that name no GPU: size modifiers and network flavours.
_NEUTRAL_TOKENS = frozenset({"XL", "NDR", "CC"})
_GPU_FAMILIES = frozenset({"NC", "NCC", "ND", "NV", "NG"})


@dataclass(frozen=True)
class SkuName:
    family: str  # upper case: NC, ND, NV, D, ...
    vcpus: int
    features: str  # lower case additive letters (and digits: isrG5 -> isrg5)
    tokens: tuple[str, ...]  # upper case, version removed
    version: int | None


def parse_name(name: str) -> SkuName | None:
    match = _SKU.match(name.strip())
    if match is None:
        return None
    tokens = tuple(t.upper() for t in match["tokens"].split("_") if t)
    version = int(match["version"]) if match["version"] else None
    return SkuName(match["family"].upper(), int(match["vcpus"]), match["features"].lower(), tokens, version)


@dataclass(frozen=True)
class Series:
    """A VM series as its Azure size page describes it."""

    name: str
    vcpus_per_gpu: int | None = None  # GPUs = vCPUs / this (fractions for vGPU slices)
    sizes: dict[int, float] | None = None  # vCPUs -> GPUs, where sizes are irregular
    interconnect: str | None = None  # between the VM's GPUs when it has several
    fabric: str | None = None
    fabric_gbps: float | None = None

    def gpus(self, vcpus: int) -> float | None:
        if self.sizes is not None:
            return self.sizes.get(vcpus)
        assert self.vcpus_per_gpu is not None
        count = Fraction(vcpus, self.vcpus_per_gpu)
        # A whole number of GPUs, or a slice of one (1/6, 1/3, 1/2 of an A10); anything else is a misread.
        return float(count) if count.denominator == 1 or (count < 1 and count.numerator == 1) else None


_IB = {"fabric": "infiniband"}
# (family, gpu_model) -> series. Reviewed against each series' size page.
SERIES: dict[tuple[str, str], Series] = {
    ("ND", "H100-SXM"): Series("ND H100 v5", 12, interconnect="nvswitch", fabric_gbps=3200, **_IB),
    ("ND", "H200-SXM"): Series("ND H200 v5", 12, interconnect="nvswitch", fabric_gbps=3200, **_IB),
    ("ND", "MI300X"): Series("ND MI300X v5", 12, interconnect="infinity_fabric", fabric_gbps=3200, **_IB),
    ("ND", "GB200"): Series("ND GB200 v6", 32, interconnect="nvswitch", fabric_gbps=1600, **_IB),
    ("ND", "GB300"): Series("ND GB300 v6", 32, interconnect="nvswitch", fabric_gbps=3200, **_IB),  # 4x800 Gbit/s scale-out
    ("ND", "A100-SXM4-80GB"): Series("NDm A100 v4", 12, interconnect="nvswitch", fabric_gbps=1600, **_IB),
    ("ND", "A100-SXM4-40GB"): Series("ND A100 v4", 12, interconnect="nvswitch", fabric_gbps=1600, **_IB),
    ("ND", "V100-SXM2-32GB"): Series("NDv2", 5, interconnect="nvlink", fabric_gbps=100, **_IB),
    ("NC", "A100-PCIe-80GB"): Series("NC A100 v4", 24, interconnect="pcie"),
    ("NC", "H100-NVL"): Series("NCads H100 v5", 40, interconnect="nvlink_bridge"),
    ("NCC", "H100-NVL"): Series("NCCads H100 v5", 40, interconnect="nvlink_bridge"),
    ("NC", "T4"): Series("NCasT4_v3", sizes={4: 1, 8: 1, 16: 1, 64: 4}, interconnect="pcie"),
    ("NC", "V100-PCIe-16GB"): Series("NCv3", 6, interconnect="pcie"),
    ("NC", "P100-PCIe-16GB"): Series("NCv2", 6, interconnect="pcie"),
    ("NC", "K80"): Series("NC (v1)", 6, interconnect="pcie"),
    ("NV", "A10"): Series("NVadsA10 v5", 36, interconnect="pcie"),
    ("NV", "M60"): Series("NVv3", 12, interconnect="pcie"),
    # 128/256/320 vCPUs: the size page (2025-12); 144/288: Resource SKUs (2026-08). The 24, 36
    # and 72 vCPU sizes hold part of a GPU whose fraction no source states: unknown_gpu_count.
    ("NC", "RTX-PRO-6000-Server"): Series("NC RTXPRO6000BSE v6", sizes={128: 1, 256: 2, 320: 2, 144: 1, 288: 2}, interconnect="pcie"),
}

# GPU family token -> gpu_model per VM family (ND carries SXM/OAM modules, NC/NV PCIe cards).
TOKENS: dict[str, dict[str, str]] = {
    "H100": {"ND": "H100-SXM", "NC": "H100-NVL", "NCC": "H100-NVL"},
    "H200": {"ND": "H200-SXM"},
    "MI300X": {"ND": "MI300X"},
    "GB200": {"ND": "GB200"},
    "GB300": {"ND": "GB300"},
    "A100": {"ND": "A100-SXM4-40GB", "NC": "A100-PCIe-80GB"},
    "A10": {"NV": "A10", "NC": "A10"},
    "T4": {"NC": "T4"},
    "RTXPRO6000BSE": {"NC": "RTX-PRO-6000-Server"},
}
# A100 by memory token (or ND's m feature, "memory": NDm A100 v4).
A100_BY_MEMORY: dict[tuple[str, int], str] = {
    ("ND", 80): "A100-SXM4-80GB",
    ("ND", 40): "A100-SXM4-40GB",
    ("NC", 80): "A100-PCIe-80GB",
    ("NC", 40): "A100-PCIe-40GB",
}
# The exceptions: series whose names carry no GPU token, by (family, version).
TOKENLESS: dict[tuple[str, int | None], str | None] = {
    ("NC", 3): "V100-PCIe-16GB",  # NCv3: NC6s_v3, NC24rs_v3
    ("NC", 2): "P100-PCIe-16GB",  # NCv2 (retired)
    ("NC", None): "K80",  # NC (v1, retired)
    ("ND", 2): "V100-SXM2-32GB",  # NDv2: ND40rs_v2
    ("ND", 4): "A100-SXM4-40GB",  # ND A100 v4: ND96asr_v4 (the m feature makes it NDm A100 v4)
    ("NV", 3): "M60",  # NVv3
    ("NV", 2): "M60",  # NVv2 (retired)
    ("NV", None): "M60",  # NV (v1, retired)
    ("NV", 4): None,  # NVv4: slices of an AMD Radeon Instinct MI25, which has no gpu_models row
    ("ND", None): None,  # ND (v1): Tesla P40, no gpu_models row
}
# Tokens of GPUs gpucat cannot describe yet (no gpu_models row): decoded, then unknown_gpu.
UNMODELLED_TOKENS = {"V620": "AMD Radeon PRO V620", "V710": "AMD Radeon PRO V710"}

GPU_TARGETS = frozenset(
    [m for by_family in TOKENS.values() for m in by_family.values()]
    + list(A100_BY_MEMORY.values())
    + [m for m in TOKENLESS.values() if m]
)


@dataclass(frozen=True)
class Decoded:
    kind: str  # gpu | not_gpu | unknown_gpu | unknown_gpu_count
    gpu_model: str | None = None
    gpu_count: float | None = None
    vcpus: int | None = None
    series: Series | None = None
    features: str = ""
    why: str | None = None


def decode(name: str) -> Decoded:
    sku = parse_name(name)
    if sku is None:
        if name.upper().startswith("STANDARD_N"):
            return Decoded("unknown_gpu", why="an N-series name the grammar cannot read")
        return Decoded("not_gpu", why="not a VM size name of a GPU family")
    if sku.family not in _GPU_FAMILIES:
        return Decoded("not_gpu", vcpus=sku.vcpus, why=f"family {sku.family} has no GPU")
    model, why = _gpu_model(sku)
    if model is None:
        return Decoded("unknown_gpu", vcpus=sku.vcpus, why=why)
    series = SERIES.get((sku.family, model))
    count = series.gpus(sku.vcpus) if series else None
    if count is None:
        where = series.name if series else f"{sku.family} with {model}"
        return Decoded("unknown_gpu_count", model, vcpus=sku.vcpus, why=f"{sku.vcpus} vCPUs is not a {where} size the reviewed tables know")
    return Decoded("gpu", model, count, sku.vcpus, series, sku.features)


def _gpu_model(sku: SkuName) -> tuple[str | None, str | None]:
    gpu_tokens = [t for t in sku.tokens if t not in _NEUTRAL_TOKENS and not _MEMORY_TOKEN.match(t)]
    memory = next((int(m[1]) for t in sku.tokens if (m := _MEMORY_TOKEN.match(t))), None)
    if not gpu_tokens:
        if (sku.family, sku.version) not in TOKENLESS:
            return None, f"no GPU token and {sku.family} v{sku.version} is not a reviewed tokenless series"
        model = TOKENLESS[(sku.family, sku.version)]
        if model is None:
            return None, f"{sku.family} v{sku.version} carries a GPU with no gpu_models row"
        if model == "A100-SXM4-40GB" and "m" in sku.features:
            model = "A100-SXM4-80GB"
        return model, None
    if len(gpu_tokens) > 1:
        return None, f"several GPU tokens: {', '.join(gpu_tokens)}"
    [token] = gpu_tokens
    if token in UNMODELLED_TOKENS:
        return None, f"{UNMODELLED_TOKENS[token]} has no gpu_models row"
    model = TOKENS.get(token, {}).get(sku.family)
    if model is None:
        return None, f"token {token} in family {sku.family} names no known GPU"
    if token == "A100":
        size = memory or (80 if sku.family == "NC" or "m" in sku.features else 40)
        model = A100_BY_MEMORY.get((sku.family, size))
        if model is None:
            return None, f"A100 with {size} GB in family {sku.family} is not a known variant"
    return model, None


def name_from_sku_name(sku_name: str) -> str:
    """`NC24ads A100 v4 Spot` -> `Standard_NC24ads_A100_v4`: the ARM name of an item that lacks one."""
    words = [w for w in sku_name.split() if w not in ("Spot", "Low", "Priority")]
    return "Standard_" + "_".join(words)
