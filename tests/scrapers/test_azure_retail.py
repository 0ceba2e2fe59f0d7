from __future__ import annotations

import json

import pytest

from gpucat.schemas.errors import FetchError, ParseError
from gpucat.scrapers import azure_retail
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    normalize_bytes,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
    skipped,
)

PAGES = ("azure/azure-retail/page-1.json", "azure/azure-retail/page-2.json", "azure/azure-retail/page-3.json")


def items():
    return parse_fixture("azure-retail", *PAGES)


def test_linux_pay_as_you_go_and_spot_only():
    result = items()
    markets = [o["market"] for o in offers(result)]
    # 63 on-demand + 62 spot (NOTES.md); Windows, Low Priority, Reservation, DevTest, usgov are out.
    assert (markets.count("on_demand"), markets.count("spot")) == (63, 62)
    assert not [o for o in offers(result) if o["region"].startswith("usgov")]


def test_placeholder_price_is_rejected_with_the_median():
    [placeholder] = [r for r in rejected(items()) if r.reasons[0].startswith("placeholder_price")]
    assert placeholder.row["offer_id"] == "Standard_ND96isr_H100_v5/ukwest/on_demand"
    assert placeholder.reasons == ("placeholder_price: 0.01 is under 20% of the median 98.32 in other regions",)


def test_whole_record_nd_h100_v5():
    record = by_id(items())["Standard_ND96isr_H100_v5/eastus/on_demand"]
    assert record == {
        "table": "offers",
        "provider": "azure",
        "offer_id": "Standard_ND96isr_H100_v5/eastus/on_demand",
        "source": "azure-retail",
        "instance_type": "Standard_ND96isr_H100_v5",
        "region": "eastus",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "Standard_ND96isr_H100_v5",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 96.0,
        "ram_gb": None,
        "price": 98.32,
        "price_unit": "instance_hour",
        "currency": "USD",
        "usd_per_hour": 98.32,
        "usd_per_gpu_hour": 12.29,
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": "infiniband",
        "fabric_gbps": 3200.0,
        "source_url": record["source_url"],
        "scraped_at": record["scraped_at"],
    }
    assert record["source_url"].startswith("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter=")
    assert record["scraped_at"].tzinfo is not None


@pytest.mark.parametrize(
    ("sku", "gpu_model", "count", "memory_gb"),
    [
        ("Standard_NV6ads_A10_v5", "A10", 1 / 6, 4.0),
        ("Standard_NV12ads_A10_v5", "A10", 1 / 3, 8.0),
        ("Standard_NC24ads_A100_v4", "A100-PCIe-80GB", 1, 80.0),
        ("Standard_NC80adis_H100_v5", "H100-NVL", 2, 94.0),
        ("Standard_NC64as_T4_v3", "T4", 4, 16.0),
        ("Standard_ND96asr_v4", "A100-SXM4-40GB", 8, 40.0),
        ("Standard_ND40rs_v2", "V100-SXM2-32GB", 8, 32.0),
        ("Standard_ND96isr_MI300X_v5", "MI300X", 8, 192.0),
        ("Standard_ND128isr_NDR_GB200_v6", "GB200", 4, 186.0),
    ],
)
def test_gpu_model_count_and_memory_from_the_sku_name(sku, gpu_model, count, memory_gb):
    [record] = [o for o in offers(items()) if o["instance_type"] == sku and o["region"] == "eastus" and o["market"] == "on_demand"]
    assert (record["gpu_model"], record["gpu_count"], record["gpu_memory_gb"]) == (gpu_model, pytest.approx(count), memory_gb)


def test_cpu_only_vms_are_skipped_and_counted_not_rejected():
    result = items()
    assert skipped(result) == {"not_gpu: not a GPU VM size": 2}
    assert not [o for o in offers(result) if o["instance_type"] in ("Standard_D4s_v5", "Standard_E8s_v5")]
    assert [r.reasons[0] for r in rejected(result) if "unknown" in r.reasons[0]] == ["unknown_gpu_count: 'Standard_NC24lds_xl_RTXPRO6000BSE_v6'"]


def test_rtx_pro_6000_server_edition_vm():
    record = by_id(items())["Standard_NC128ds_xl_RTXPRO6000BSE_v6/westus2/spot"]
    assert (record["gpu_model"], record["gpu_count"], record["gpu_memory_gb"], record["vcpus"], record["usd_per_gpu_hour"]) == (
        "RTX-PRO-6000-Server", 1.0, 96.0, 128.0, 1.47,
    )


def test_an_item_without_an_arm_name_is_named_from_its_sku_name():
    record = by_id(items())["Standard_NC24ads_A100_v4/eastus2/spot"]
    assert (record["gpu_model"], record["gpu_count"], record["market"], record["price"]) == ("A100-PCIe-80GB", 1.0, "spot", 1.2862)


@pytest.mark.parametrize(
    ("sku", "reasons"),
    [
        ("Standard_NV8ads_V710_v5", ("unknown_gpu: 'Standard_NV8ads_V710_v5'", "AMD Radeon PRO V710 has no gpu_models row")),
        ("Standard_NC8ads_A10_v4", ("unknown_gpu_count: 'Standard_NC8ads_A10_v4'", "8 vCPUs is not a NC with A10 size the reviewed tables know")),
    ],
)
def test_unplaceable_gpu_sizes_are_rejected_with_why(sku, reasons):
    item = {**_item(), "armSkuName": sku, "meterName": "x", "skuName": "x"}
    body = ('{"Items": [' + __import__("json").dumps(item) + '], "NextPageLink": null}').encode()
    [result] = normalize_bytes("azure-retail", body)
    assert result.reasons == reasons


def _item():
    return {
        "currencyCode": "USD", "retailPrice": 1.0, "unitPrice": 1.0, "armRegionName": "eastus", "location": "US East",
        "effectiveStartDate": "2026-01-01T00:00:00Z", "meterName": "x", "productName": "Virtual Machines NCadsA10 v4 Series",
        "skuName": "x", "serviceName": "Virtual Machines", "unitOfMeasure": "1 Hour", "type": "Consumption", "armSkuName": "x",
    }  # fmt: skip


def test_next_page_link_drives_pagination():
    pages = [(p, azure_retail.PAGES.next(json.loads(open(f"fixtures/{p}", "rb").read()), azure_retail.URL, None)) for p in PAGES]
    pages = [(p, following and following[0]) for p, following in pages]
    assert pages[0][1].startswith("https://prices.azure.com:443/api/retail/prices?api-version=2023-01-01-preview&$filter=")
    assert pages[-1][1] is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"items": [], "NextPageLink": null}', "lacks Items"),
        (b'{"Items": [', "not JSON"),
    ],
    ids=["renamed-envelope", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("azure-retail", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"Items": [{"armSkuName": "Standard_NC6s_v3"}]}', "malformed_record: missing field 'type'"),
    ],
    ids=["renamed-item-fields"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("azure-retail", body) == [(reason,)]


def test_fetch_stops_on_a_pagination_loop(tmp_path):
    import httpx

    def handler(request):
        return httpx.Response(200, json={"Items": [], "NextPageLink": azure_retail.URL})

    fetcher = mock_fetcher(azure_retail.SOURCE, handler, tmp_path)
    with pytest.raises(FetchError, match="linked back to a page already read"):
        list(azure_retail.fetch(fetcher))


