from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import verda_instance_types
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

FIXTURE = "verda/verda-instance-types/instance-types.json"
URL = "https://api.datacrunch.io/v1/instance-types"


def items():
    return parse_fixture("verda-instance-types", FIXTURE)


def records():
    return json.loads(fixture_path(FIXTURE).read_bytes())


def one(itype, **changes):
    record = next(r for r in records() if r["instance_type"] == itype)
    record.update(changes)
    return json.dumps([record]).encode()


def renamed(itype, old, new):
    record = next(r for r in records() if r["instance_type"] == itype)
    return json.dumps([{(new if k == old else k): v for k, v in record.items()}]).encode()


def test_whole_record_h100_on_demand_from_a_string_price():
    assert by_id(items())["1H100.80S.30V/on_demand"] == {
        "table": "offers",
        "provider": "verda",
        "offer_id": "1H100.80S.30V/on_demand",
        "source": "verda-instance-types",
        "instance_type": "1H100.80S.30V",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "H100 SXM5 80GB",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 30.0,
        "ram_gb": 120.0,
        "price": 3.95,
        "price_unit": "instance_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 3.95,
        "usd_per_gpu_hour": 3.95,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 14, tzinfo=UTC),
    }


def test_every_priced_gpu_type_gives_on_demand_and_spot_beside_it():
    got = {o["offer_id"]: (o["gpu_model"], o["gpu_count"], o["gpu_memory_gb"], o["price"]) for o in parse_bytes("verda-instance-types", fixture_path(FIXTURE).read_bytes(), url=URL) if not isinstance(o, Rejected)}
    assert got == {
        "1H100.80S.30V/on_demand": ("H100-SXM", 1.0, 80.0, 3.95),
        "1H100.80S.30V/spot": ("H100-SXM", 1.0, 80.0, 1.7),
        # gpu_memory is the instance total: 96 GB over 2 cards.
        "2A6000.20V/on_demand": ("RTX-A6000", 2.0, 48.0, 1.98),
        "2A6000.20V/spot": ("RTX-A6000", 2.0, 48.0, 0.7),
        "8H100.80S.176V/on_demand": ("H100-SXM", 8.0, 80.0, 31.6),
        "8H100.80S.176V/spot": ("H100-SXM", 8.0, 80.0, 13.6),
        "1A100.22V/on_demand": ("A100-SXM4-80GB", 1.0, 80.0, 1.29),
        "1A100.22V/spot": ("A100-SXM4-80GB", 1.0, 80.0, 0.52),
        "1B200.30V/on_demand": ("B200", 1.0, 180.0, 4.49),
        "1B200.30V/spot": ("B200", 1.0, 180.0, 1.8),
        # spot_price "0.00": no spot market, not a free GPU.
        "1H200.141S.44V/on_demand": ("H200-SXM", 1.0, 141.0, 3.59),
        "1L40S.20V/on_demand": ("L40S", 1.0, 48.0, 1.1),
        "1L40S.20V/spot": ("L40S", 1.0, 48.0, 0.45),
        "1RTX6000ADA.10V/on_demand": ("RTX-6000-Ada", 1.0, 48.0, 0.99),
        "1RTX6000ADA.10V/spot": ("RTX-6000-Ada", 1.0, 48.0, 0.35),
        "1RTXPRO6000.30V/on_demand": ("RTX-PRO-6000-AnyEdition", 1.0, 96.0, 1.69),
        "1RTXPRO6000.30V/spot": ("RTX-PRO-6000-AnyEdition", 1.0, 96.0, 0.7),
        # "Tesla V100 16GB": SXM2 or PCIe is not stated, so the stand-in (form factor "Unstated").
        "1V100.6V/on_demand": ("V100-16GB-AnyForm", 1.0, 16.0, 0.89),
        "1V100.6V/spot": ("V100-16GB-AnyForm", 1.0, 16.0, 0.25),
    }


def test_per_instance_prices_become_per_gpu():
    ids = by_id(items())
    eight = ids["8H100.80S.176V/spot"]
    assert (eight["usd_per_hour"], eight["usd_per_gpu_hour"], eight["interconnect"]) == (13.6, 1.7, "nvswitch")
    assert ids["2A6000.20V/on_demand"]["usd_per_gpu_hour"] == 0.99


def test_unmapped_gpu_and_placeholder_price_are_rejected_and_the_cpu_node_is_skipped():
    assert [(r.reasons, r.row["instance_type"]) for r in rejected(items())] == [
        (("no_price: 1B300.30V price_per_hour '0.00'",), "1B300.30V"),
    ]
    assert not [o for o in by_id(items()) if o.startswith("CPU.")]


def test_a_euro_record_keeps_its_currency():
    [on_demand, spot] = parse_bytes("verda-instance-types", one("1L40S.20V", currency="eur", price_per_hour="0.95", spot_price="0.39"))
    assert [(o["market"], o["price"], o["currency"]) for o in (on_demand, spot)] == [("on_demand", 0.95, "EUR"), ("spot", 0.39, "EUR")]


def test_a_numeric_price_reads_like_a_string_one():
    [on_demand, _spot] = parse_bytes("verda-instance-types", one("1L40S.20V", price_per_hour=1.1))
    assert on_demand["price"] == 1.1


def test_a_missing_spot_price_means_no_spot_offer():
    record = next(r for r in records() if r["instance_type"] == "1L40S.20V")
    del record["spot_price"]
    assert [o["market"] for o in parse_bytes("verda-instance-types", json.dumps([record]).encode())] == ["on_demand"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (json.dumps({"instance_types": records()}).encode(), "not a JSON list"),
        (b'[{"instance_type": "1H100.80S.30V"', "not JSON"),
    ],
    ids=["not-an-array", "truncated"],
)
def test_bad_bodies_fail_the_source(payload, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("verda-instance-types", payload)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (renamed("1L40S.20V", "price_per_hour", "price"), "malformed_record: missing field 'price_per_hour'"),
        (json.dumps([{k: v for k, v in records()[0].items() if k != "gpu"}]).encode(), "malformed_record: missing field 'gpu'"),
        (one("1L40S.20V", price_per_hour="N/A"), "malformed_record: ValueError: could not convert string to float: 'N/A'"),
    ],
    ids=["renamed-price", "missing-gpu", "non-numeric-price"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("verda-instance-types", body) == [(reason,)]


def test_the_reviewed_table_is_what_the_source_declares():
    assert verda_instance_types.SOURCE.gpu_targets == set(verda_instance_types.GPU_DESCRIPTIONS.values()) | {"V100-16GB-AnyForm"}
