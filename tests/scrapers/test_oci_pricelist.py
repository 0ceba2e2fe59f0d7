from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import oci_pricelist
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

FIXTURE = "oci/oci-pricelist/products.json"
URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"


def items():
    return parse_fixture("oci-pricelist", FIXTURE)


def parsed():
    """The parser alone: independent of which canonical models the reference table has yet."""
    return parse_bytes("oci-pricelist", fixture_path(FIXTURE).read_bytes(), url=URL)


def item(part="B98415", name="Oracle Cloud Infrastructure - Compute - GPU - H100", prices=None, **fields):
    body = {
        "partNumber": part,
        "displayName": name,
        "metricName": "GPU Per Hour",
        "serviceCategory": "Compute - GPU",
        "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": prices if prices is not None else [{"model": "PAY_AS_YOU_GO", "value": 10}]}],
    }
    body.update(fields)
    return body


def body(*items_):
    return json.dumps({"lastUpdated": "2026-08-14T09:09:55.872Z", "items": list(items_)}).encode()


def test_whole_record_h100_shape_priced_per_gpu_hour():
    assert by_id(items())["BM.GPU.H100.8/on_demand"] == {
        "table": "offers",
        "provider": "oci",
        "offer_id": "BM.GPU.H100.8/on_demand",
        "source": "oci-pricelist",
        "instance_type": "BM.GPU.H100.8",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "Oracle Cloud Infrastructure - Compute - GPU - H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 224.0,
        "ram_gb": 2048.0,
        "price": 10.0,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 80.0,
        "usd_per_gpu_hour": 10.0,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 11, tzinfo=UTC),
    }


def test_every_reviewed_part_yields_its_shapes_and_nothing_else():
    got = {o["instance_type"]: (o["gpu_model"], o["gpu_count"], o["price"]) for o in parsed() if not isinstance(o, Rejected)}
    assert got == {
        "BM.GPU.H100.8": ("H100-SXM", 8.0, 10.0),
        "BM.GPU.H200.8": ("H200-SXM", 8.0, 10.0),
        "BM.GPU.B200.8": ("B200", 8.0, 14.0),
        "BM.GPU.B300.8": ("B300", 8.0, 15.0),
        "BM.GPU.GB200.4": ("GB200", 4.0, 16.0),
        "BM.GPU.GB300.4": ("GB300", 4.0, 18.0),
        "BM.GPU.MI300X.8": ("MI300X", 8.0, 6.0),
        "BM.GPU.MI355X.8": ("MI355X", 8.0, 8.6),
        "BM.GPU.A100-v2.8": ("A100-SXM4-80GB", 8.0, 4.0),
        "BM.GPU4.8": ("A100-SXM4-40GB", 8.0, 3.05),
        "BM.GPU.L40S.4": ("L40S", 4.0, 3.5),
        "BM.GPU.RTXPRO.8": ("RTX-PRO-6000-AnyEdition", 8.0, 4.5),
        # One part, three shapes: the A10 rate times each shape's GPU count.
        "VM.GPU.A10.1": ("A10", 1.0, 2.0),
        "VM.GPU.A10.2": ("A10", 2.0, 2.0),
        "BM.GPU.A10.4": ("A10", 4.0, 2.0),
    }


def test_a10_shapes_scale_the_per_gpu_rate():
    ids = by_id(items())
    assert [(ids[f"{s}/on_demand"]["usd_per_hour"], ids[f"{s}/on_demand"]["interconnect"]) for s in ("VM.GPU.A10.1", "VM.GPU.A10.2", "BM.GPU.A10.4")] == [
        (2.0, None),
        (4.0, "pcie"),
        (8.0, "pcie"),
    ]


def test_gpu_rentals_without_a_reviewed_shape_are_rejected_by_name():
    assert [(r.reasons[0], r.row["partNumber"]) for r in rejected(parsed())] == [
        ("unknown_gpu: 'OCI - Compute - GPU - H100T'", "B109480"),
        ("unknown_gpu: 'Compute - Bare Metal GPU Standard - X7'", "B88517"),
        ("unknown_gpu: 'Compute - Virtual Machine GPU Standard - X7'", "B88518"),
        ("unknown_gpu: 'Compute - GPU Standard - V2'", "B89734"),
        ("unknown_gpu: 'Compute - GPU - E3'", "B92740"),
    ]


def test_licences_vmware_cloud_at_customer_roving_edge_and_commits_are_not_offers():
    # They are skipped, not rejected: none of them is a GPU rental that failed to map.
    result = parsed()
    named = {o["gpu_name"] for o in result if not isinstance(o, Rejected)} | {r.row["displayName"] for r in rejected(result)}
    assert not [n for n in named if any(word in n for word in ("AI Enterprise", "VMware", "Cloud@Customer", "Roving", "Commit", "WebCenter"))]


def test_the_reviewed_table_only_names_parts_the_price_list_has():
    parts = {i["partNumber"] for i in json.loads(fixture_path(FIXTURE).read_bytes())["items"]}
    assert set(oci_pricelist.PART_SHAPES) <= parts
    assert oci_pricelist.SOURCE.gpu_targets == {s.gpu_model for shapes in oci_pricelist.PART_SHAPES.values() for s in shapes}


@pytest.mark.parametrize(
    ("prices", "reason"),
    [
        ([{"model": "PAY_AS_YOU_GO", "value": 0}], "no_price: part B98415 has USD pay-as-you-go prices [0.0]"),
        ([], "no_price: part B98415 has USD pay-as-you-go prices []"),
        ([{"model": "MONTHLY_COMMIT", "value": 7}], "no_price: part B98415 has USD pay-as-you-go prices []"),
        (
            [{"model": "PAY_AS_YOU_GO", "value": 10, "rangeMin": 0, "rangeMax": 100}, {"model": "PAY_AS_YOU_GO", "value": 8, "rangeMin": 100}],
            "no_price: part B98415 has USD pay-as-you-go prices [8.0, 10.0]",
        ),
    ],
    ids=["zero-placeholder", "no-prices", "commit-only", "tiered"],
)
def test_parts_without_one_positive_hourly_rate_are_rejected(prices, reason):
    [result] = parse_bytes("oci-pricelist", body(item(prices=prices)))
    assert isinstance(result, Rejected) and result.reasons == (reason,)


def test_a_part_without_a_metric_is_not_a_gpu_rental():
    assert [o["instance_type"] for o in parse_bytes("oci-pricelist", body({"partNumber": "B1", "displayName": "Free tier"}, item()))] == ["BM.GPU.H100.8"]


def test_a_non_usd_localization_is_not_read_as_usd():
    eur = item()
    eur["currencyCodeLocalizations"] = [{"currencyCode": "EUR", "prices": [{"model": "PAY_AS_YOU_GO", "value": 9.3}]}]
    [result] = parse_bytes("oci-pricelist", body(eur))
    assert isinstance(result, Rejected) and result.reasons[0].startswith("no_price")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (json.dumps({"lastUpdated": "x", "products": []}).encode(), "lacks items"),
        (body({("metric" if k == "metricName" else k): v for k, v in item().items()}), "no `metricName`"),
        (b'{"lastUpdated": "2026-08-14", "items": [', "not JSON"),
    ],
    ids=["renamed-envelope", "renamed-metric", "truncated"],
)
def test_bad_bodies_fail_the_source(payload, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("oci-pricelist", payload)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (body({k: v for k, v in item().items() if k != "displayName"}), "malformed_record: missing field 'displayName'"),
        (body({("currencyCodeLocalisations" if k == "currencyCodeLocalizations" else k): v for k, v in item().items()}), "malformed_record: missing field 'currencyCodeLocalizations'"),
        (body(item(prices=[{"model": "PAY_AS_YOU_GO", "value": "ten"}])), "malformed_record: ValueError: could not convert string to float: 'ten'"),
    ],
    ids=["missing-name", "renamed-localizations", "non-numeric-price"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("oci-pricelist", body) == [(reason,)]


def test_fetch_asks_for_usd_in_one_request(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"items": []})

    source = oci_pricelist.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path)
    pages = list(oci_pricelist.fetch(fetcher))
    assert [str(r.url) for r in sent] == [URL] and len(pages) == 1
