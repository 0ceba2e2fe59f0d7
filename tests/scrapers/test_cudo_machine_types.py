from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import cudo_machine_types
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

FIXTURE = "cudo/cudo-machine-types/machine-types.json"
URL = "https://rest.compute.cudo.org/v1/vms/machine-types"


def items():
    return parse_fixture("cudo-machine-types", FIXTURE)


def parsed():
    """The parser alone: independent of which canonical models the reference table has yet."""
    return parse_bytes("cudo-machine-types", fixture_path(FIXTURE).read_bytes(), url=URL)


def records():
    return json.loads(fixture_path(FIXTURE).read_bytes())["machineTypes"]


def body(*machine_types):
    return json.dumps({"machineTypes": list(machine_types)}).encode()


def h100(**changes):
    record = next(r for r in records() if r["gpuModel"] == "H100 SXM")
    record.update(changes)
    return record


def test_whole_record_one_h100_with_its_components_summed():
    assert by_id(items())["ca-montreal-3/sapphire-rapids-h100/1x"] == {
        "table": "offers",
        "provider": "cudo",
        "offer_id": "ca-montreal-3/sapphire-rapids-h100/1x",
        "source": "cudo-machine-types",
        "instance_type": "sapphire-rapids-h100 (1x H100 SXM, 4 vCPU, 16 GiB RAM, 100 GiB disk)",
        "region": "ca-montreal-3",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "H100 SXM",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,  # nameplate: Cudo states none
        "vcpus": 4.0,
        "ram_gb": 17.18,  # 16 GiB
        # GPU 2.45 + 4 vCPU x 0.0022 + 16 GiB x 0.0035 + 100 GiB disk x 0.000107
        "price": 2.5255,
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 2.5255,
        "usd_per_gpu_hour": 2.5255,
        "availability": "available",
        "available_count": 8,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 15, tzinfo=UTC),
    }


def test_every_gpu_type_is_priced_for_the_gpu_counts_its_best_host_has_free():
    got = {o["offer_id"]: (o["gpu_model"], o["vcpus"], o["price"], o["availability"]) for o in parsed() if not isinstance(o, Rejected)}
    assert got == {
        # 0.05 + 4 x 0.0025 + 16 GiB x 0.0038 + 100 x 0.00013; five GPUs free: 1, 2 and 4.
        "br-saopaulo-1/cascade-lake/1x": ("RTX-3080", 4.0, 0.1338, "available"),
        "br-saopaulo-1/cascade-lake/2x": ("RTX-3080", 8.0, 0.2546, "available"),
        "br-saopaulo-1/cascade-lake/4x": ("RTX-3080", 16.0, 0.4962, "available"),
        # This type needs at least 0.259 vCPU per GiB: 4 vCPU get at most 15 GiB, not 16.
        "no-luster-1/epyc-rome-rtx-a5000/1x": ("RTX-A5000", 4.0, 0.5901, "available"),
        "no-luster-1/epyc-rome-rtx-a5000/2x": ("RTX-A5000", 8.0, 1.1695, "available"),
        "no-luster-1/epyc-rome-rtx-a5000/4x": ("RTX-A5000", 16.0, 2.3317, "available"),
        "ca-montreal-3/sapphire-rapids-h100/1x": ("H100-SXM", 4.0, 2.5255, "available"),
        "ca-montreal-3/sapphire-rapids-h100/2x": ("H100-SXM", 8.0, 5.0403, "available"),
        "ca-montreal-3/sapphire-rapids-h100/4x": ("H100-SXM", 16.0, 10.0699, "available"),
        "ca-montreal-3/sapphire-rapids-h100/8x": ("H100-SXM", 32.0, 20.1291, "available"),
        "us-carlsbad-1/intel-ice-lake-a100-pci/1x": ("A100-PCIe-80GB", 4.0, 1.5755, "available"),
        "us-carlsbad-1/intel-ice-lake-a100-pci/2x": ("A100-PCIe-80GB", 8.0, 3.1403, "available"),
        "se-smedjebacken-1/epyc-genoa-h100-nvl/1x": ("H100-NVL", 4.0, 2.1778, "available"),
        # not in the reviewed table: "RTX 4000 SFF Ada" is the catalog's own family name (rules)
        "gb-bournemouth-1/sapphire-rapids-rtx4000sff/1x": ("RTX-4000-SFF-Ada", 4.0, 0.3755, "available"),
        "gb-bournemouth-1/sapphire-rapids-rtx4000sff/2x": ("RTX-4000-SFF-Ada", 8.0, 0.7403, "available"),
        "se-smedjebacken-1/epyc-genoa-h100-nvl/2x": ("H100-NVL", 8.0, 4.3446, "available"),
        "se-smedjebacken-1/epyc-genoa-h100-nvl/4x": ("H100-NVL", 16.0, 8.6782, "available"),
        # Nothing free: one 1-GPU offer, unavailable.
        "se-smedjebacken-1/epyc-genoa-l40s/1x": ("L40S", 4.0, 0.9478, "unavailable"),
    }


def test_per_gpu_price_of_a_multi_gpu_vm():
    eight = by_id(items())["ca-montreal-3/sapphire-rapids-h100/8x"]
    assert (eight["usd_per_hour"], eight["usd_per_gpu_hour"], eight["ram_gb"]) == (20.1291, 2.516138, 137.439)


def test_unknown_gpu_and_zero_gpu_price_are_rejected_and_cpu_types_skipped():
    assert [(r.reasons, r.row["machineType"]) for r in rejected(parsed())] == [
        (("no_price: ice-lake-a40-compute in ca-montreal-3 gpuPriceHr is 0.0",), "ice-lake-a40-compute"),
    ]
    assert not [o for o in parsed() if not isinstance(o, Rejected) and o["instance_type"].startswith("epyc-rome ")]


def test_vcpus_stay_within_the_types_per_gpu_range():
    [one] = parse_bytes("cudo-machine-types", body(h100(maxVcpuPerGpu=2, maxGpuFree=1)))
    assert (one["vcpus"], one["instance_type"]) == (2.0, "sapphire-rapids-h100 (1x H100 SXM, 2 vCPU, 8 GiB RAM, 100 GiB disk)")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (json.dumps({"machine_types": records()}).encode(), "lacks machineTypes"),
        (b'{"machineTypes": [{"dataCenterId": "no-luster-1"', "not JSON"),
    ],
    ids=["renamed-envelope", "truncated"],
)
def test_bad_bodies_fail_the_source(payload, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("cudo-machine-types", payload)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (body({k: v for k, v in h100().items() if k != "gpuPriceHr"}), "malformed_record: missing field 'gpuPriceHr'"),
        (body(h100(vcpuPriceHr={"amount": "0.0022"})), "malformed_record: missing field 'value'"),
        (body(h100(gpuPriceHr={"value": "n/a"})), "malformed_record: ValueError: could not convert string to float: 'n/a'"),
    ],
    ids=["missing-gpu-price", "renamed-value", "non-numeric-price"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("cudo-machine-types", body) == [(reason,)]


def test_the_reviewed_table_is_what_the_source_declares():
    # plus what the fixture's names outside the table map to by the catalog rules
    assert cudo_machine_types.SOURCE.gpu_targets == set(cudo_machine_types.GPU_MODELS.values()) | {"RTX-4000-SFF-Ada"}
