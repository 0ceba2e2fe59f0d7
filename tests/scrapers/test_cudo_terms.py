from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected

BODY = "cudo/cudo-terms/machine-types.json"
URL = "https://rest.compute.cudo.org/v1/vms/machine-types"


def test_one_disk_price_per_data_centre_per_gib_hour():
    items = parse_fixture("cudo-terms", BODY)
    assert rejected(items) == []
    rows = offers(items)
    assert [(r["region"], r["original_price"], r["usd_per_gb_month"]) for r in rows] == [
        ("br-saopaulo-1", 0.00013, 0.088382512),  # 0.00013 x 730 / 1.073741824
        ("gb-bournemouth-1", 0.000107, 0.072745606),
        ("no-luster-1", 0.000107, 0.072745606),
        ("se-smedjebacken-1", 0.00011, 0.074785203),
    ]
    assert rows[0] == {
        "table": "scraped_storage_terms",
        "provider": "cudo",
        "kind": "block",
        "product": "Disk",
        "region": "br-saopaulo-1",
        "usd_per_gb_month": 0.088382512,
        "original_currency": "USD",
        "original_price": 0.00013,
        "original_unit": "GiB-hour",
        "max_size_gb": None,
        "read_throughput_mb_s": None,
        "source": "cudo-terms",
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 30, 5, tzinfo=UTC),
        "verified_on": "2026-11-20",
        "evidence": f'usd_per_gb_month,original_price: "dataCenterId br-saopaulo-1, minStorageGibPriceHr value 0.00013 (machine types cascade-lake)" <{URL}>',
        "notes": "VM disk priced per GiB-hour; GB-month = x 730 h / 1.073741824",
    }


def _record(machine_type: str, price: str, centre: str = "dc-1") -> dict:
    return {"dataCenterId": centre, "machineType": machine_type, "minStorageGibPriceHr": {"value": price}}


@pytest.mark.parametrize(
    ("records", "reason"),
    [
        ([_record("a", "0.0001"), _record("b", "0.0002")], "ambiguous_price"),  # one centre, two prices
        ([_record("a", "0.000000")], "no_price"),
        ([_record("a", "n/a")], "unparseable_number"),
    ],
)
def test_a_data_centre_without_one_clear_price_is_rejected(records, reason):
    (item,) = parse_bytes("cudo-terms", json.dumps({"machineTypes": records}).encode())
    assert item.reasons[0].startswith(reason) and item.row["dataCenterId"] == "dc-1"


@pytest.mark.parametrize("body", [b"[]", b'{"machineTypes": {}}', b"<html>", json.dumps({"machineTypes": [{"dataCenterId": "x", "machineType": "y"}]}).encode()])
def test_a_payload_in_the_wrong_shape_fails(body):
    with pytest.raises(ParseError):
        parse_bytes("cudo-terms", body)
