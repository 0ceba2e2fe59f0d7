"""AWS facts shared by the AWS sources: which GPU each EC2 family carries, and instance specs.

The price list CSV states GPU counts but not the GPU model, and the spot feed states neither,
so both read this reviewed table (AWS instance-type pages; `ec2:DescribeInstanceTypes` needs
IAM). A GPU family missing here is rejected as `unknown_gpu`, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# EC2 family -> canonical gpu_model.
FAMILY_GPU: dict[str, str] = {
    "p3": "V100-SXM2-16GB",
    "p3dn": "V100-SXM2-32GB",
    "p4d": "A100-SXM4-40GB",
    "p4de": "A100-SXM4-80GB",
    "p5": "H100-SXM",
    "p5e": "H200-SXM",
    "p5en": "H200-SXM",
    "p6-b200": "B200",
    "p6-b300": "B300",
    "g3": "M60",
    "g3s": "M60",
    "p2": "K80",
    "g4dn": "T4",
    "g4ad": "Radeon-Pro-V520",
    "g5": "A10G",
    "g5g": "T4G",
    "g6": "L4",
    "gr6": "L4",
    "g6f": "L4",
    "g6e": "L40S",
    "dl1": "Gaudi",
}

# Families whose names say "GPU" even when we do not know them yet (spot feed has no GPU column).
GPU_FAMILY_PATTERN = re.compile(r"^(p\d|g\d|gr\d|dl\d)")

GIB_TO_GB = 1.073741824


@dataclass(frozen=True)
class InstanceSpec:
    gpu_count: float
    vcpus: int
    ram_gib: float
    interconnect: str | None = None  # between the instance's GPUs
    fabric: str | None = None  # multi-node network
    fabric_gbps: float | None = None


def _multi(count: float, interconnect: str) -> str | None:
    return interconnect if count > 1 else None


_SPECS: list[tuple[str, float, int, float, str | None, float | None]] = [
    # instance type, GPUs, vCPUs, RAM GiB, EFA, EFA Gbit/s
    ("g4dn.xlarge", 1, 4, 16, None, None),
    ("g4dn.2xlarge", 1, 8, 32, None, None),
    ("g4dn.4xlarge", 1, 16, 64, None, None),
    ("g4dn.8xlarge", 1, 32, 128, None, None),
    ("g4dn.16xlarge", 1, 64, 256, None, None),
    ("g4dn.12xlarge", 4, 48, 192, None, None),
    ("g4dn.metal", 8, 96, 384, None, None),
    ("g5.xlarge", 1, 4, 16, None, None),
    ("g5.2xlarge", 1, 8, 32, None, None),
    ("g5.4xlarge", 1, 16, 64, None, None),
    ("g5.8xlarge", 1, 32, 128, None, None),
    ("g5.16xlarge", 1, 64, 256, None, None),
    ("g5.12xlarge", 4, 48, 192, None, None),
    ("g5.24xlarge", 4, 96, 384, None, None),
    ("g5.48xlarge", 8, 192, 768, "efa", 100),
    ("g5g.xlarge", 1, 4, 8, None, None),
    ("g5g.2xlarge", 1, 8, 16, None, None),
    ("g5g.4xlarge", 1, 16, 32, None, None),
    ("g5g.8xlarge", 1, 32, 64, None, None),
    ("g5g.16xlarge", 2, 64, 128, None, None),
    ("g6.xlarge", 1, 4, 16, None, None),
    ("g6.2xlarge", 1, 8, 32, None, None),
    ("g6.4xlarge", 1, 16, 64, None, None),
    ("g6.8xlarge", 1, 32, 128, None, None),
    ("g6.16xlarge", 1, 64, 256, None, None),
    ("g6.12xlarge", 4, 48, 192, None, None),
    ("g6.24xlarge", 4, 96, 384, None, None),
    ("g6.48xlarge", 8, 192, 768, "efa", 100),
    ("gr6.4xlarge", 1, 16, 128, None, None),
    ("gr6.8xlarge", 1, 32, 256, None, None),
    ("g6e.xlarge", 1, 4, 32, None, None),
    ("g6e.2xlarge", 1, 8, 64, None, None),
    ("g6e.4xlarge", 1, 16, 128, None, None),
    ("g6e.8xlarge", 1, 32, 256, None, None),
    ("g6e.16xlarge", 1, 64, 512, None, None),
    ("g6e.12xlarge", 4, 48, 384, None, None),
    ("g6e.24xlarge", 4, 96, 768, "efa", 200),
    ("g6e.48xlarge", 8, 192, 1536, "efa", 400),
    ("p3.2xlarge", 1, 8, 61, None, None),
    ("p3.8xlarge", 4, 32, 244, None, None),
    ("p3.16xlarge", 8, 64, 488, None, None),
    ("p3dn.24xlarge", 8, 96, 768, "efa", 100),
    ("p4d.24xlarge", 8, 96, 1152, "efa", 400),
    ("p4de.24xlarge", 8, 96, 1152, "efa", 400),
    ("p5.4xlarge", 1, 16, 256, None, None),
    ("p5.48xlarge", 8, 192, 2048, "efa", 3200),
    ("p5e.48xlarge", 8, 192, 2048, "efa", 3200),
    ("p5en.48xlarge", 8, 192, 2048, "efa", 3200),
    ("p6-b200.48xlarge", 8, 192, 2048, "efa", 3200),
    ("p6-b300.48xlarge", 8, 192, 4096, "efa", 6400),
    ("dl1.24xlarge", 8, 96, 768, "efa", 400),
    ("p2.xlarge", 1, 4, 61, None, None),
    ("p2.8xlarge", 8, 32, 488, None, None),
    ("p2.16xlarge", 16, 64, 732, None, None),
    ("g3s.xlarge", 1, 4, 30.5, None, None),
    ("g3.4xlarge", 1, 16, 122, None, None),
    ("g3.8xlarge", 2, 32, 244, None, None),
    ("g3.16xlarge", 4, 64, 488, None, None),
]

# How the GPUs inside one instance of a family are connected when there are several.
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
}



def family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


INSTANCES: dict[str, InstanceSpec] = {
    name: InstanceSpec(
        gpu_count=count,
        vcpus=vcpus,
        ram_gib=ram,
        interconnect=_multi(count, FAMILY_INTERCONNECT.get(family(name), "pcie")),
        fabric=fabric,
        fabric_gbps=gbps,
    )
    for name, count, vcpus, ram, fabric, gbps in _SPECS
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
