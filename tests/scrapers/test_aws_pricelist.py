from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers import aws_pricelist
from tests.scrapers.helpers import (
    by_id,
    normalize_bytes,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    skipped,
)

US_EAST_1_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/20261113194237/us-east-1/index.csv"

# (instance type, GPU model, GPUs, USD per hour) of every on-demand Linux GPU offer in the fixture,
# per fixtures/aws/aws-pricelist/NOTES.md; Windows, RHEL, SUSE, Ubuntu Pro, SQL, Dedicated, Host, capacity
# reservations, Capacity Blocks and Reserved terms must all stay out.
US_EAST_1 = {
    ("g4dn.12xlarge", "T4", 4.0, 3.912),
    ("g4dn.metal", "T4", 8.0, 7.824),
    ("g4dn.xlarge", "T4", 1.0, 0.526),
    ("g5.48xlarge", "A10G", 8.0, 16.288),
    ("g5.xlarge", "A10G", 1.0, 1.006),
    ("g6.xlarge", "L4", 1.0, 0.8048),
    ("g6e.48xlarge", "L40S", 8.0, 30.13118),
    ("g6e.xlarge", "L40S", 1.0, 1.861),
    ("g6f.2xlarge", "L4", 0.25, 0.5624),
    ("p3.16xlarge", "V100-SXM2-16GB", 8.0, 24.48),
    ("p3.2xlarge", "V100-SXM2-16GB", 1.0, 3.06),
    ("p4d.24xlarge", "A100-SXM4-40GB", 8.0, 21.957642),
    ("p4de.24xlarge", "A100-SXM4-80GB", 8.0, 27.447),
    ("p5.48xlarge", "H100-SXM", 8.0, 55.04),
    ("p5en.48xlarge", "H200-SXM", 8.0, 63.296),
    ("p6-b200.48xlarge", "B200", 8.0, 113.9328),
}


def test_us_east_1_yields_exactly_the_linux_on_demand_gpu_offers():
    items = parse_fixture("aws-pricelist", "aws/aws-pricelist/us-east-1.csv")
    assert rejected(items) == []
    assert {(o["instance_type"], o["gpu_model"], o["gpu_count"], o["usd_per_hour"]) for o in offers(items)} == US_EAST_1


def test_whole_record_p5():
    record = by_id(parse_fixture("aws-pricelist", "aws/aws-pricelist/us-east-1.csv"))["p5.48xlarge/us-east-1/on_demand"]
    assert record == {
        "table": "offers",
        "provider": "aws",
        "offer_id": "p5.48xlarge/us-east-1/on_demand",
        "source": "aws-pricelist",
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "p5",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 192.0,
        "ram_gb": 2199.023,
        "price": 55.04,
        "price_unit": "instance_hour",
        "currency": "USD",
        "usd_per_hour": 55.04,
        "usd_per_gpu_hour": 6.88,
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": "efa",
        "fabric_gbps": 3200.0,
        "source_url": US_EAST_1_URL,
        "scraped_at": datetime(2026, 11, 20, 6, 0, 3, tzinfo=UTC),
    }


def test_fractional_gpu_is_one_device_with_the_slice_memory():
    record = by_id(parse_fixture("aws-pricelist", "aws/aws-pricelist/us-east-1.csv"))["g6f.2xlarge/us-east-1/on_demand"]
    assert (record["gpu_count"], record["gpu_memory_gb"], record["usd_per_gpu_hour"]) == (0.25, 6.0, 2.2496)


def test_local_zones_keep_their_own_region_code():
    regions = {o["region"] for o in offers(parse_fixture("aws-pricelist", "aws/aws-pricelist/us-west-2.csv"))}
    assert regions == {"us-west-2", "us-west-2-lax-1"}


@pytest.mark.parametrize(
    ("value", "gb"),
    [("2048 GiB", 2199.023), ("192 GB", 192.0), ("640 GB HBM3", 640.0), ("0.5 GiB", 0.537), ("NA", None), ("", None)],
)
def test_sizes_are_converted_to_gb(value, gb):
    assert aws_pricelist._gb(value) == gb


HEADER = '"SKU","TermType","Unit","PricePerUnit","Currency","Product Family","Location","Instance Type","vCPU","Memory","Tenancy","Operating System","CapacityStatus","GPU","GPU Memory","MarketOption","Pre Installed S/W","Region Code"\n'
ROW = '"AAAA","OnDemand","Hrs","{price}","USD","Compute Instance","US East (N. Virginia)","{itype}","8","61 GiB","Shared","Linux","Used","{gpus}","16 GB","OnDemand","NA","us-east-1"\n'
PREAMBLE = '"FormatVersion","v1.0"\n"Disclaimer","x"\n"Publication Date","2026-11-13T19:42:37Z"\n"Version","20261113194237"\n"OfferCode","AmazonEC2"\n'


def test_columns_are_found_by_name_whatever_their_order():
    body = PREAMBLE + HEADER + ROW.format(price="3.06", itype="p3.2xlarge", gpus="1")
    [record] = parse_bytes("aws-pricelist", body.encode())
    assert (record["instance_type"], record["gpu_model"], record["price"]) == ("p3.2xlarge", "V100-SXM2-16GB", 3.06)


def test_unknown_gpu_family_keeps_its_name_for_the_rejection():
    body = PREAMBLE + HEADER + ROW.format(price="99.5", itype="p7.48xlarge", gpus="8")
    items = parse_fixture_free(body)
    assert [r.reasons for r in rejected(items)] == [("unknown_gpu: 'p7'", "accelerated family of an unknown generation")]


def test_a_family_the_grammar_calls_cpu_only_but_with_gpus_is_rejected_not_hidden():
    body = PREAMBLE + HEADER + ROW.format(price="4.2", itype="x9z.8xlarge", gpus="2")
    assert [r.reasons[0] for r in rejected(parse_fixture_free(body))] == ["unknown_gpu: 'x9z'"]


def test_cpu_only_rows_are_skipped_and_counted():
    body = PREAMBLE + HEADER + ROW.format(price="0.192", itype="m6i.xlarge", gpus="") + ROW.format(price="0.34", itype="c7i.2xlarge", gpus="")
    items = parse_fixture_free(body)
    assert (rejected(items), skipped(items)) == ([], {"not_gpu: not an accelerated instance family": 2})
    assert not [i for i in items if isinstance(i, dict)]


@pytest.mark.parametrize(
    ("itype", "gpus", "gpu_model", "gpu_count"),
    [
        ("g7e.2xlarge", "1", "RTX-PRO-6000-Server", 1.0),
        ("g4ad.8xlarge", "2", "Radeon-Pro-V520", 2.0),
        ("trn2.48xlarge", "", "Trainium2", 16.0),  # the GPU column is empty for AWS chips
        ("inf2.24xlarge", "", "Inferentia2", 6.0),
    ],
)
def test_accelerators_with_or_without_a_gpu_column(itype, gpus, gpu_model, gpu_count):
    [record] = [i for i in parse_fixture_free(PREAMBLE + HEADER + ROW.format(price="2.5", itype=itype, gpus=gpus)) if isinstance(i, dict)]
    assert (record["gpu_model"], record["gpu_count"]) == (gpu_model, gpu_count)


def parse_fixture_free(body: str):
    return normalize_bytes("aws-pricelist", body.encode())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("<html>AccessDenied</html>\n", "no SKU header"),
        (PREAMBLE + HEADER.replace('"GPU",', '"Accelerators",'), "lacks columns: GPU"),
        (PREAMBLE + HEADER + ROW.format(price="3.06", itype="p3.2xlarge", gpus="1")[:40], "truncated"),
    ],
    ids=["not-csv", "renamed-column", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("aws-pricelist", body.encode())


def test_malformed_row_is_rejected_not_dropped():
    body = PREAMBLE + HEADER + '"BBBB","OnDemand","Hrs","1.0","USD","Linux","Shared","Used"\n'
    items = parse_bytes("aws-pricelist", body.encode())
    assert [r.reasons for r in rejected(items)] == [("malformed_csv_row: 8 fields, header has 18",)]


def test_region_index_gives_versioned_csv_urls():
    index = b'{"regions": {"us-east-1": {"regionCode": "us-east-1", "currentVersionUrl": "/offers/v1.0/aws/AmazonEC2/20261113194237/us-east-1/index.json"}}}'
    assert aws_pricelist.region_file_urls(index, set()) == [US_EAST_1_URL]
    with pytest.raises(ParseError, match="not in the AWS region index: eu-north-1"):
        aws_pricelist.region_file_urls(index, {"eu-north-1"})
