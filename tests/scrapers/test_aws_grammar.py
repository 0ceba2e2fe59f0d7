"""The EC2 instance-type grammar: name -> (gpu_model, GPUs), exceptions and non-GPU names included."""

from __future__ import annotations

import pytest

from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import _aws


def decoded(instance_type: str) -> tuple[str | None, float | None]:
    result = _aws.decode(instance_type)
    spec = _aws.INSTANCES.get(instance_type)
    return result.gpu_model, spec.gpu_count if spec else None


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [
        # series + generation name the GPU; d/n/f options leave it alone
        ("p5.48xlarge", ("H100-SXM", 8)),
        ("p5.4xlarge", ("H100-SXM", 1)),
        ("p4d.24xlarge", ("A100-SXM4-40GB", 8)),
        ("g4dn.12xlarge", ("T4", 4)),
        ("g5.48xlarge", ("A10G", 8)),
        ("g6.xlarge", ("L4", 1)),
        ("gr6.8xlarge", ("L4", 1)),
        ("g6f.large", ("L4", 0.125)),  # f: a fraction of one L4
        ("g6f.4xlarge", ("L4", 0.5)),
        ("gr6f.4xlarge", ("L4", 0.5)),
        ("g7.48xlarge", ("RTX-PRO-4500", 8)),
        ("trn1.2xlarge", ("Trainium", 1)),
        ("trn1n.32xlarge", ("Trainium", 16)),
        ("trn2.48xlarge", ("Trainium2", 16)),
        ("inf2.48xlarge", ("Inferentia2", 12)),
        ("dl1.24xlarge", ("Gaudi", 8)),
        ("p3.16xlarge", ("V100-SXM2-16GB", 8)),
        # a variant names the accelerator
        ("p6-b200.48xlarge", ("B200", 8)),
        ("p6-b300.48xlarge", ("B300", 8)),
        ("p6e-gb200.36xlarge", ("GB200", None)),  # decoded; its size is not in the table
        # the reviewed exceptions: an option letter that changes the accelerator
        ("p3dn.24xlarge", ("V100-SXM2-32GB", 8)),
        ("p4de.24xlarge", ("A100-SXM4-80GB", 8)),
        ("p5e.48xlarge", ("H200-SXM", 8)),
        ("p5en.48xlarge", ("H200-SXM", 8)),
        ("g4ad.xlarge", ("Radeon-Pro-V520", 1)),
        ("g4ad.16xlarge", ("Radeon-Pro-V520", 4)),
        ("g5g.16xlarge", ("T4G", 2)),
        ("g6e.48xlarge", ("L40S", 8)),
        ("g7e.2xlarge", ("RTX-PRO-6000-Server", 1)),
        ("g3s.xlarge", ("M60", 1)),
    ],
)
def test_gpu_names(instance_type, expected):
    assert _aws.decode(instance_type).kind == "gpu"
    assert decoded(instance_type) == expected
    assert expected[0] in gpu_models()


@pytest.mark.parametrize(
    "instance_type",
    ["m6i.xlarge", "c7i.2xlarge", "t3.nano", "m7g.large", "r7iz.metal-16xl", "m7i-flex.large", "u-6tb1.56xlarge",
     "u7i-12tb.224xlarge", "mac2-m2pro.metal", "hpc7g.16xlarge", "x2iedn.32xlarge", "f2.6xlarge", "vt1.3xlarge"],
)
def test_not_gpu_names(instance_type):
    assert _aws.decode(instance_type).kind == "not_gpu"


@pytest.mark.parametrize(
    ("instance_type", "why"),
    [
        ("inf1.xlarge", "no gpu_models row"),  # an accelerator gpucat cannot describe yet
        ("dl2q.24xlarge", "memory per accelerator unsourced"),
        ("p7.48xlarge", "unknown generation"),  # a new generation is never guessed
        ("g6x.xlarge", "options 'x'"),  # nor is a new option letter on a known generation
        ("p6-zz9.48xlarge", "variant 'zz9'"),
    ],
)
def test_unknown_accelerators_say_why(instance_type, why):
    result = _aws.decode(instance_type)
    assert (result.kind, result.gpu_model) == ("unknown_gpu", None)
    assert why in str(result.why)


def test_every_mapping_target_is_a_canonical_model():
    assert _aws.GPU_TARGETS - set(gpu_models()) == set()
