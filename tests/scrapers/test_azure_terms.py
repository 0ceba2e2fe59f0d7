from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.redact import match_url
from gpucat.scrapers import azure_terms
from tests.conftest import FIXTURES
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected, rejection_reasons

DISKS = ("azure/azure-terms/disks-1.json", "azure/azure-terms/disks-2.json")
BANDWIDTH = "azure/azure-terms/bandwidth-1.json"
# as a capture records them (quotes left literal, as the fetcher normalizes the request URL)
DISKS_URL, BANDWIDTH_URL = (match_url(u) for u in azure_terms.walk_urls("eastus"))
PREMIUM_TABLE = "https://github.com/MicrosoftDocs/azure-docs/blob/main/includes/disk-storage-premium-ssd-sizes.md"
PREMIUM_THROUGHPUT = azure_terms.THROUGHPUT_TABLES["P"]


def test_disk_pages_yield_one_lrs_capacity_price_per_size():
    items = parse_fixture("azure-terms", *DISKS)
    assert rejected(items) == []
    rows = {r["product"]: r for r in offers(items)}
    # not the Disk Mount or Disk Operations meters, not ZRS, not the P30 reservation
    assert {p: (r["usd_per_gb_month"], r["max_size_gb"], r["read_throughput_mb_s"]) for p, r in rows.items()} == {
        "Premium SSD P6 LRS": (0.143481884, 68.719, 50.0),
        "Premium SSD P10 LRS": (0.143409125, 137.439, 100.0),
        "Premium SSD P20 LRS": (0.133186404, 549.756, 150.0),
        "Premium SSD P30 LRS": (0.122936399, 1099.512, 200.0),
        "Standard SSD E10 LRS": (0.069849193, 137.439, 60.0),  # a ceiling: "Up to 60 MB/s"
        "Standard SSD E30 LRS": (0.069849193, 1099.512, 60.0),
    }
    assert rows["Premium SSD P10 LRS"] == {
        "table": "scraped_storage_terms",
        "provider": "azure",
        "kind": "block",
        "product": "Premium SSD P10 LRS",
        "region": "eastus",
        "usd_per_gb_month": 0.143409125,  # 19.71 / (128 x 1.073741824)
        "original_currency": "USD",
        "original_price": 0.153984375,  # 19.71 / 128 per GiB-month
        "original_unit": "GiB-month",
        "max_size_gb": 137.439,
        "read_throughput_mb_s": 100.0,
        "source": "azure-terms",
        "source_url": DISKS_URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 9, tzinfo=UTC),
        "verified_on": "2026-11-20",
        "evidence": (
            f'usd_per_gb_month,original_price: "meterId 3c6b4e1e-0d8b-4d6a-8f0a-5d2b0b7c1a10, P10 LRS Disk (Premium SSD Managed Disks): '
            f'19.71 USD per 1/Month" <{DISKS_URL}>'
            f' || usd_per_gb_month,original_price,max_size_gb: "Premium SSD sizes P10, Disk size in GiB 128" <{PREMIUM_TABLE}>'
            f' || read_throughput_mb_s: "Premium SSD sizes P10, Base provisioned Throughput per disk 100 MB/s" <{PREMIUM_THROUGHPUT}>'
        ),
        "notes": (
            "priced per disk: 19.71 USD a month for 128 GiB; max_size_gb is this size's capacity;"
            " read_throughput_mb_s is the size's base throughput"
        ),
    }


def test_bandwidth_page_yields_the_default_routing_internet_tiers_in_order():
    items = parse_fixture("azure-terms", BANDWIDTH)
    assert rejected(items) == []
    tiers = offers(items)
    # not the "Routing Preference: Internet" ladder, data in, or inter-region transfer
    assert [(t["tier"], t["from_gb"], t["to_gb"], t["usd_per_gb"]) for t in tiers] == [
        (1, 0.0, 100.0, 0.0),
        (2, 100.0, 10335.0, 0.087),
        (3, 10335.0, 51295.0, 0.083),
        (4, 51295.0, 153695.0, 0.07),
        (5, 153695.0, 512095.0, 0.05),
        (6, 512095.0, None, 0.05),
    ]
    assert tiers[1] == {
        "table": "scraped_egress_terms",
        "provider": "azure",
        "scope": "internet",
        "region": "eastus",
        "tier": 2,
        "from_gb": 100.0,
        "to_gb": 10335.0,
        "usd_per_gb": 0.087,
        "original_price": 0.087,
        "original_unit": "GB",
        "free_allowance_gb_month": None,
        "source": "azure-terms",
        "source_url": BANDWIDTH_URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 11, tzinfo=UTC),
        "verified_on": "2026-11-20",
        "evidence": (
            'from_gb,usd_per_gb,original_price: "meterId 9995d93a-7d35-4d3f-9c69-7a7fea447ef4, Rtn Preference: MGN Standard Data Transfer Out, '
            f'tierMinimumUnits 100.0: 0.087 USD per 1 GB" <{BANDWIDTH_URL}> || to_gb: "next tier: tierMinimumUnits 10335" <{BANDWIDTH_URL}>'
        ),
        "notes": None,
    }


def _page(path: str) -> dict:
    return json.loads((FIXTURES / path).read_bytes())


def _with_item(path: str, index_of: str, **changes) -> bytes:
    page = _page(path)
    item = next(i for i in page["Items"] if i["meterName"] == index_of or i.get("meterId") == index_of)
    item.update(changes)
    return json.dumps(page).encode()


@pytest.mark.parametrize(
    ("path", "meter", "changes", "reason"),
    [
        (DISKS[0], "P10 LRS Disk", {"skuName": "P90 LRS", "meterName": "P90 LRS Disk"}, "unknown_disk_size"),
        (DISKS[0], "P10 LRS Disk", {"skuName": "E10 LRS", "meterName": "E10 LRS Disk"}, "unknown_disk_size"),  # an E size under Premium
        (DISKS[0], "P10 LRS Disk", {"unitOfMeasure": "1 GB/Month"}, "unexpected_unit"),
        (DISKS[0], "P10 LRS Disk", {"retailPrice": "19.71"}, "unparseable_number"),
    ],
)
def test_a_disk_item_that_cannot_be_trusted_is_rejected(path, meter, changes, reason):
    items = parse_bytes("azure-terms", _with_item(path, meter, **changes))
    reasons = [r for i in items if not isinstance(i, dict) for r in i.reasons]
    assert any(r.startswith(reason) for r in reasons), reasons


def test_a_second_meter_for_the_same_region_rejects_the_schedule():
    page = _page(BANDWIDTH)
    extra = dict(next(i for i in page["Items"] if i["productName"] == "Rtn Preference: MGN" and i["tierMinimumUnits"] == 100.0))
    extra.update(meterId="00000000-0000-4000-8000-000000000000", retailPrice=0.09)
    page["Items"].append(extra)
    items = list(azure_terms.postprocess(list(azure_terms.parse(_bytes(page), url=BANDWIDTH_URL, fetched_at=datetime(2026, 11, 20, tzinfo=UTC)))))
    assert items and all(not hasattr(i, "tier") and i.reasons[0].startswith("ambiguous_schedule") for i in items)


def _bytes(page: dict):
    import io

    return io.BytesIO(json.dumps(page).encode())


@pytest.mark.parametrize(("body", "message"), [(b"[]", "lacks Items"), (b'{"Items": {}}', "lacks Items \\(a JSON list; got dict\\)")])
def test_a_page_in_the_wrong_shape_fails(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("azure-terms", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"Items": [{"type": "Consumption"}]}', "malformed_record: missing field 'currencyCode'"),
    ],
    ids=["missing-currency"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("azure-terms", body) == [(reason,)]


def test_every_size_in_the_tables_maps_to_its_gib():
    assert azure_terms.DISK_SIZES_GIB["P10"] == azure_terms.DISK_SIZES_GIB["E10"] == 128
    assert azure_terms.DISK_SIZES_GIB["P80"] == 32767 and len(azure_terms.DISK_SIZES_GIB) == 28
