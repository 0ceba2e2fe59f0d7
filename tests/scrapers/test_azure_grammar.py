"""The Azure ARM SKU grammar: name -> (gpu_model, GPUs), exceptions and non-GPU names included."""

from __future__ import annotations

import pytest

from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import _azure


@pytest.mark.parametrize(
    ("sku", "gpu_model", "gpus"),
    [
        # the GPU family token names the GPU; the VM family its form factor
        ("Standard_ND96isr_H100_v5", "H100-SXM", 8),
        ("Standard_NC40ads_H100_v5", "H100-NVL", 1),
        ("Standard_NC80adis_H100_v5", "H100-NVL", 2),
        ("Standard_NCC40ads_H100_v5", "H100-NVL", 1),
        ("Standard_ND96isr_H200_v5", "H200-SXM", 8),
        ("Standard_ND96isr_MI300X_v5", "MI300X", 8),
        ("Standard_ND128isr_NDR_GB200_v6", "GB200", 4),  # NDR names no GPU
        ("Standard_ND128isr_GB300_v6", "GB300", 4),
        ("Standard_ND128isrG5_GB300_v6", "GB300", 4),  # a digit among the features
        ("Standard_NC24ads_A100_v4", "A100-PCIe-80GB", 1),
        ("Standard_NC96ads_A100_v4", "A100-PCIe-80GB", 4),
        ("Standard_ND96amsr_A100_v4", "A100-SXM4-80GB", 8),  # m: the 80 GB NDm series
        ("Standard_ND96asr_A100_v4", "A100-SXM4-40GB", 8),
        ("Standard_NC24ads_A100_80GB_v4", "A100-PCIe-80GB", 1),  # a memory token
        ("Standard_ND96asr_A100_80GB_v4", "A100-SXM4-80GB", 8),
        ("Standard_NC4as_T4_v3", "T4", 1),
        ("Standard_NC64as_T4_v3", "T4", 4),
        ("Standard_NV6ads_A10_v5", "A10", 1 / 6),
        ("Standard_NV18ads_A10_v5", "A10", 1 / 2),
        ("Standard_NV36adms_A10_v5", "A10", 1),
        ("Standard_NV72ads_A10_v5", "A10", 2),
        ("Standard_NC128ds_xl_RTXPRO6000BSE_v6", "RTX-PRO-6000-Server", 1),
        ("Standard_NC288lds_xl_RTXPRO6000BSE_v6", "RTX-PRO-6000-Server", 2),
        # spelled in capitals, as some API items are
        ("Standard_NC40ADS_H100_V5", "H100-NVL", 1),
        ("STANDARD_ND96ISR_H100_V5", "H100-SXM", 8),
        # the reviewed exceptions: series without a GPU token
        ("Standard_ND96asr_v4", "A100-SXM4-40GB", 8),
        ("Standard_ND40rs_v2", "V100-SXM2-32GB", 8),
        ("Standard_NC6s_v3", "V100-PCIe-16GB", 1),
        ("Standard_NC24rs_v3", "V100-PCIe-16GB", 4),
        ("Standard_NV12s_v3", "M60", 1),
        ("Standard_NV48s_v3", "M60", 4),
        ("Standard_NC12s_v2", "P100-PCIe-16GB", 2),
    ],
)
def test_gpu_sizes(sku, gpu_model, gpus):
    decoded = _azure.decode(sku)
    assert (decoded.kind, decoded.gpu_model, decoded.gpu_count) == ("gpu", gpu_model, pytest.approx(gpus))
    assert gpu_model in gpu_models()


@pytest.mark.parametrize(
    "sku",
    ["Standard_D4s_v5", "Standard_E8s_v5", "Standard_E4-2s_v3", "Standard_M416ms_v2", "Standard_DC4as_cc_v5",
     "Standard_HB120rs_v3", "Standard_B1ls", "Standard_F2s_v2", "Standard_L8s_v3", "Standard_NP10s", "Basic_A0", ""],
)
def test_not_gpu_sizes(sku):
    assert _azure.decode(sku).kind == "not_gpu"


@pytest.mark.parametrize(
    ("sku", "kind", "why"),
    [
        ("Standard_NV8ads_V710_v5", "unknown_gpu", "V710 has no gpu_models row"),
        ("Standard_NG8ads_V620_v1", "unknown_gpu", "V620 has no gpu_models row"),
        ("Standard_NV4as_v4", "unknown_gpu", "no gpu_models row"),  # NVv4: slices of an AMD MI25
        ("Standard_ND99isr_Z9_v9", "unknown_gpu", "token Z9"),  # a new GPU is never guessed
        ("Standard_NC24lds_xl_RTXPRO6000BSE_v6", "unknown_gpu_count", "24 vCPUs"),  # part of a GPU, fraction unstated
        ("Standard_NC8ads_A10_v4", "unknown_gpu_count", "8 vCPUs"),
        ("Standard_NC36ads_A100_v4", "unknown_gpu_count", "36 vCPUs"),  # 1.5 GPUs is a misread, not a size
    ],
)
def test_unplaceable_sizes_say_why(sku, kind, why):
    decoded = _azure.decode(sku)
    assert decoded.kind == kind and decoded.gpu_count is None
    assert why in str(decoded.why)


def test_a_name_from_the_sku_name_of_an_item_without_one():
    assert _azure.name_from_sku_name("NC24ads A100 v4 Spot") == "Standard_NC24ads_A100_v4"
    assert _azure.name_from_sku_name("ND96amsr A100 v4 Low Priority") == "Standard_ND96amsr_A100_v4"


def test_every_mapping_target_is_a_canonical_model():
    assert _azure.GPU_TARGETS - set(gpu_models()) == set()
    assert {model for _, model in _azure.SERIES} <= _azure.GPU_TARGETS
