"""AWS facts shared by the AWS sources: the instance-type grammar, and instance specs.

The price list CSV states GPU counts but not the GPU model, and the spot feed states neither,
so both decode the instance type. An EC2 instance type is `<family>.<size>`; a family is
`<series><generation>[<options>][-<variant>]`: `p5en` is series p, generation 5, options `en`;
`p6-b200` carries its accelerator in the variant. The series says whether it is an accelerator
at all (p, g, gr: GPUs; trn, inf, dl: AWS/Intel/Qualcomm chips; everything else is not a GPU
offer), the series and generation name the GPU (g6: L4), and option letters that do not change
the accelerator (d: local NVMe, n: more network, f: a fraction of a GPU) are ignored. The
reviewed table `FAMILY_EXCEPTIONS` holds only the families where an option letter does change it
(p4de: A100 80GB, g6e: L40S, g4ad: AMD Radeon). A GPU family the grammar cannot place is
`unknown_gpu`, never guessed; a non-accelerated family is skipped as not a GPU offer.

GPU counts, vCPUs, memory and network come from the instance table below: every current type is
transcribed from aws/karpenter-provider-aws `website/content/en/preview/reference/instance-types.md`
(generated from `ec2:DescribeInstanceTypes`, commit 1d927085, 2026-08-21); retired types (p2, p3,
g3, dl1) keep the figures of the AWS instance-type pages this table started from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GIB_TO_GB = 1.073741824

# (series, generation) -> canonical gpu_model, for families whose options leave the GPU alone.
GENERATION_GPU: dict[tuple[str, int], str] = {
    ("p", 2): "K80",
    ("p", 3): "V100-SXM2-16GB",
    ("p", 4): "A100-SXM4-40GB",
    ("p", 5): "H100-SXM",
    ("g", 3): "M60",
    ("g", 4): "T4",
    ("g", 5): "A10G",
    ("g", 6): "L4",
    ("gr", 6): "L4",
    ("g", 7): "RTX-PRO-4500",
    ("trn", 1): "Trainium",
    ("trn", 2): "Trainium2",
    ("inf", 2): "Inferentia2",
    ("dl", 1): "Gaudi",
}
# A variant suffix names the accelerator itself (p6-b200, p6e-gb200).
VARIANT_GPU: dict[str, str] = {"b200": "B200", "b300": "B300", "gb200": "GB200", "gb300": "GB300"}
# Reviewed exceptions: families whose option letters change the accelerator.
FAMILY_EXCEPTIONS: dict[str, str] = {
    "p3dn": "V100-SXM2-32GB",  # 32 GB V100s (p3 has 16 GB)
    "p4de": "A100-SXM4-80GB",  # e: 80 GB A100s (p4d has 40 GB)
    "p5e": "H200-SXM",
    "p5en": "H200-SXM",
    "g3s": "M60",
    "g4ad": "Radeon-Pro-V520",  # a: AMD CPU and AMD GPU (g4dn is NVIDIA T4)
    "g5g": "T4G",  # g: Graviton host with T4G (g5 is A10G)
    "g6e": "L40S",
    "g7e": "RTX-PRO-6000-Server",
}
# Accelerated families with no gpu_models row: decoded, then rejected as unknown_gpu with why.
UNMODELLED: dict[str, str] = {
    "inf1": "AWS Inferentia (first generation) has no gpu_models row",
    "dl2q": "Qualcomm AI 100: memory per accelerator unsourced, no gpu_models row",
}
GPU_SERIES = frozenset({"p", "g", "gr", "trn", "inf", "dl"})
# Option letters that leave the accelerator unchanged.
NEUTRAL_OPTIONS = frozenset("dnf")
GPU_TARGETS = frozenset(GENERATION_GPU.values()) | frozenset(VARIANT_GPU.values()) | frozenset(FAMILY_EXCEPTIONS.values())

_FAMILY = re.compile(r"^(?P<series>[a-z]+?)(?P<generation>\d+)(?P<options>[a-z]*)(?:-(?P<variant>[a-z0-9]+))?$")


@dataclass(frozen=True)
class Decoded:
    """What an instance type's name says: a GPU offer (`gpu_model`), not one, or an unknown GPU."""

    family: str
    kind: str  # gpu | not_gpu | unknown_gpu
    gpu_model: str | None = None
    why: str | None = None  # for not_gpu / unknown_gpu


def family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def decode(instance_type: str) -> Decoded:
    fam = family(instance_type)
    match = _FAMILY.match(fam)
    if match is None or match["series"] not in GPU_SERIES:
        return Decoded(fam, "not_gpu", why="not an accelerated instance family")
    if fam in FAMILY_EXCEPTIONS:
        return Decoded(fam, "gpu", FAMILY_EXCEPTIONS[fam])
    if fam in UNMODELLED:
        return Decoded(fam, "unknown_gpu", why=UNMODELLED[fam])
    if match["variant"]:
        model = VARIANT_GPU.get(match["variant"])
        return Decoded(fam, "gpu", model) if model else Decoded(fam, "unknown_gpu", why=f"variant {match['variant']!r} names no known accelerator")
    model = GENERATION_GPU.get((match["series"], int(match["generation"])))
    if model is None:
        return Decoded(fam, "unknown_gpu", why="accelerated family of an unknown generation")
    if not set(match["options"]) <= NEUTRAL_OPTIONS:
        return Decoded(fam, "unknown_gpu", why=f"options {match['options']!r} may change the accelerator")
    return Decoded(fam, "gpu", model)


@dataclass(frozen=True)
class InstanceSpec:
    gpu_count: float  # fractional for a slice of one GPU (g6f)
    vcpus: int
    ram_gib: float
    gpu_memory_gib: float | None = None  # per device, stated only for fractional slices
    interconnect: str | None = None  # between the instance's GPUs
    fabric: str | None = None  # multi-node network
    fabric_gbps: float | None = None


# instance type: (accelerators, vCPUs, RAM MiB, EFA devices, network Mbit/s, accelerator MiB for slices)
_CURRENT: dict[str, tuple[float, int, int, int, int, int | None]] = {
    "g4ad.xlarge": (1, 4, 16384, 0, 2000, None),
    "g4ad.2xlarge": (1, 8, 32768, 0, 4167, None),
    "g4ad.4xlarge": (1, 16, 65536, 0, 8333, None),
    "g4ad.8xlarge": (2, 32, 131072, 0, 15000, None),
    "g4ad.16xlarge": (4, 64, 262144, 0, 25000, None),
    "g4dn.xlarge": (1, 4, 16384, 0, 5000, None),
    "g4dn.2xlarge": (1, 8, 32768, 0, 10000, None),
    "g4dn.4xlarge": (1, 16, 65536, 0, 20000, None),
    "g4dn.8xlarge": (1, 32, 131072, 1, 50000, None),
    "g4dn.12xlarge": (4, 48, 196608, 1, 50000, None),
    "g4dn.16xlarge": (1, 64, 262144, 1, 50000, None),
    "g4dn.metal": (8, 96, 393216, 1, 100000, None),
    "g5.xlarge": (1, 4, 16384, 0, 2500, None),
    "g5.2xlarge": (1, 8, 32768, 0, 5000, None),
    "g5.4xlarge": (1, 16, 65536, 0, 10000, None),
    "g5.8xlarge": (1, 32, 131072, 1, 25000, None),
    "g5.12xlarge": (4, 48, 196608, 1, 40000, None),
    "g5.16xlarge": (1, 64, 262144, 1, 25000, None),
    "g5.24xlarge": (4, 96, 393216, 1, 50000, None),
    "g5.48xlarge": (8, 192, 786432, 1, 100000, None),
    "g5g.xlarge": (1, 4, 8192, 0, 1250, None),
    "g5g.2xlarge": (1, 8, 16384, 0, 2500, None),
    "g5g.4xlarge": (1, 16, 32768, 0, 5000, None),
    "g5g.8xlarge": (1, 32, 65536, 0, 12000, None),
    "g5g.16xlarge": (2, 64, 131072, 0, 25000, None),
    "g5g.metal": (2, 64, 131072, 0, 25000, None),
    "g6.xlarge": (1, 4, 16384, 0, 2500, None),
    "g6.2xlarge": (1, 8, 32768, 0, 5000, None),
    "g6.4xlarge": (1, 16, 65536, 0, 10000, None),
    "g6.8xlarge": (1, 32, 131072, 1, 25000, None),
    "g6.12xlarge": (4, 48, 196608, 1, 40000, None),
    "g6.16xlarge": (1, 64, 262144, 1, 25000, None),
    "g6.24xlarge": (4, 96, 393216, 1, 50000, None),
    "g6.48xlarge": (8, 192, 786432, 1, 100000, None),
    "g6e.xlarge": (1, 4, 32768, 0, 2500, None),
    "g6e.2xlarge": (1, 8, 65536, 0, 5000, None),
    "g6e.4xlarge": (1, 16, 131072, 0, 20000, None),
    "g6e.8xlarge": (1, 32, 262144, 1, 25000, None),
    "g6e.12xlarge": (4, 48, 393216, 1, 100000, None),
    "g6e.16xlarge": (1, 64, 524288, 1, 35000, None),
    "g6e.24xlarge": (4, 96, 786432, 2, 200000, None),
    "g6e.48xlarge": (8, 192, 1572864, 4, 400000, None),
    # g6f: a slice of one L4 (DescribeInstanceTypes reports 0 GPUs and the slice's memory; the
    # fraction is that memory over the 22888 MiB a whole L4 reports there).
    "g6f.large": (0.125, 2, 8192, 0, 1500, 2861),
    "g6f.xlarge": (0.125, 4, 16384, 0, 2500, 2861),
    "g6f.2xlarge": (0.25, 8, 32768, 0, 5000, 5722),
    "g6f.4xlarge": (0.5, 16, 65536, 0, 10000, 11444),
    "gr6.4xlarge": (1, 16, 131072, 0, 10000, None),
    "gr6.8xlarge": (1, 32, 262144, 1, 25000, None),
    "gr6f.4xlarge": (0.5, 16, 131072, 0, 10000, 11444),
    "g7.2xlarge": (1, 8, 32768, 0, 60000, None),
    "g7.4xlarge": (1, 16, 65536, 0, 60000, None),
    "g7.8xlarge": (1, 32, 131072, 1, 80000, None),
    "g7.12xlarge": (2, 48, 196608, 1, 175000, None),
    "g7.24xlarge": (4, 96, 393216, 1, 350000, None),
    "g7.48xlarge": (8, 192, 786432, 2, 700000, None),
    "g7e.2xlarge": (1, 8, 65536, 0, 50000, None),
    "g7e.4xlarge": (1, 16, 131072, 0, 50000, None),
    "g7e.8xlarge": (1, 32, 262144, 1, 100000, None),
    "g7e.12xlarge": (2, 48, 524288, 1, 400000, None),
    "g7e.24xlarge": (4, 96, 1048576, 2, 800000, None),
    "g7e.48xlarge": (8, 192, 2097152, 4, 1600000, None),
    "inf2.xlarge": (1, 4, 16384, 0, 2083, None),
    "inf2.8xlarge": (1, 32, 131072, 0, 16667, None),
    "inf2.24xlarge": (6, 96, 393216, 0, 50000, None),
    "inf2.48xlarge": (12, 192, 786432, 0, 100000, None),
    "p3dn.24xlarge": (8, 96, 786432, 1, 100000, None),
    "p4d.24xlarge": (8, 96, 1179648, 4, 400000, None),
    "p4de.24xlarge": (8, 96, 1179648, 4, 400000, None),
    "p5.4xlarge": (1, 16, 262144, 1, 100000, None),
    "p5.48xlarge": (8, 192, 2097152, 32, 3200000, None),
    "p5e.48xlarge": (8, 192, 2097152, 32, 3200000, None),
    "p5en.48xlarge": (8, 192, 2097152, 16, 3200000, None),
    "p6-b200.48xlarge": (8, 192, 2097152, 8, 3200000, None),
    "p6-b300.48xlarge": (8, 192, 4194304, 16, 6400000, None),
    "trn1.2xlarge": (1, 8, 32768, 0, 3125, None),
    "trn1.32xlarge": (16, 128, 524288, 8, 800000, None),
    "trn1n.32xlarge": (16, 128, 524288, 16, 1600000, None),
    "trn2.48xlarge": (16, 192, 2097152, 16, 3200000, None),
}
# Retired types still seen in archived captures: instance type, GPUs, vCPUs, RAM GiB, EFA Gbit/s.
_RETIRED: list[tuple[str, float, int, float, float | None]] = [
    ("p3.2xlarge", 1, 8, 61, None),
    ("p3.8xlarge", 4, 32, 244, None),
    ("p3.16xlarge", 8, 64, 488, None),
    ("dl1.24xlarge", 8, 96, 768, 400),
    ("p2.xlarge", 1, 4, 61, None),
    ("p2.8xlarge", 8, 32, 488, None),
    ("p2.16xlarge", 16, 64, 732, None),
    ("g3s.xlarge", 1, 4, 30.5, None),
    ("g3.4xlarge", 1, 16, 122, None),
    ("g3.8xlarge", 2, 32, 244, None),
    ("g3.16xlarge", 4, 64, 488, None),
]

# How the accelerators inside one instance of a family are connected when there are several;
# any other multi-GPU family is PCIe.
FAMILY_INTERCONNECT: dict[str, str] = {
    "p3": "nvlink",
    "p3dn": "nvlink",
    "p4d": "nvswitch",
    "p4de": "nvswitch",
    "p5": "nvswitch",
    "p5e": "nvswitch",
    "p5en": "nvswitch",
    "p6-b200": "nvswitch",
    "p6-b300": "nvswitch",
    "p6e-gb200": "nvswitch",
    "trn1": "neuronlink",
    "trn1n": "neuronlink",
    "trn2": "neuronlink",
}


def _multi(count: float, interconnect: str) -> str | None:
    return interconnect if count > 1 else None


def _spec(name: str, count: float, vcpus: int, ram_gib: float, fabric_gbps: float | None, slice_gib: float | None = None) -> InstanceSpec:
    return InstanceSpec(
        gpu_count=count,
        vcpus=vcpus,
        ram_gib=ram_gib,
        gpu_memory_gib=slice_gib,
        interconnect=_multi(count, FAMILY_INTERCONNECT.get(family(name), "pcie")),
        fabric="efa" if fabric_gbps else None,
        fabric_gbps=fabric_gbps,
    )


INSTANCES: dict[str, InstanceSpec] = {
    **{
        name: _spec(name, count, vcpus, ram_mib / 1024, mbps / 1000 if efa else None, slice_mib / 1024 if slice_mib else None)
        for name, (count, vcpus, ram_mib, efa, mbps, slice_mib) in _CURRENT.items()
    },
    **{name: _spec(name, count, vcpus, ram, gbps) for name, count, vcpus, ram, gbps in _RETIRED},
}


def interconnect_for(instance_type: str, gpu_count: float) -> str | None:
    spec = INSTANCES.get(instance_type)
    if spec is not None:
        return spec.interconnect
    return _multi(gpu_count, FAMILY_INTERCONNECT.get(family(instance_type), "pcie"))


# Legacy spot.js region names -> region codes (the feed froze before most regions existed).
LEGACY_REGIONS: dict[str, str] = {
    "us-east": "us-east-1",
    "us-west": "us-west-1",
    "eu-ireland": "eu-west-1",
    "apac-sin": "ap-southeast-1",
    "apac-syd": "ap-southeast-2",
    "apac-tokyo": "ap-northeast-1",
    "sa-east-1": "sa-east-1",
}
