from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.conftest import FIXTURES
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected

EC2_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv"
TRANSFER_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AWSDataTransfer/current/us-east-1/index.csv"
EC2_AT = datetime(2026, 11, 20, 6, 0, 3, tzinfo=UTC)
TRANSFER_AT = datetime(2026, 11, 20, 6, 0, 4, tzinfo=UTC)
EC2_FILE = "aws/aws-terms/us-east-1-ec2.csv"
TRANSFER_FILE = "aws/aws-terms/us-east-1-transfer.csv"


def test_ec2_file_yields_the_gp3_and_gp2_volume_prices_only():
    items = parse_fixture("aws-terms", EC2_FILE)
    assert rejected(items) == []
    gp3 = {
        "table": "scraped_storage_terms",
        "provider": "aws",
        "kind": "block",
        "product": "EBS gp3",
        "region": "us-east-1",
        "usd_per_gb_month": 0.08,
        "original_currency": "USD",
        "original_price": 0.08,
        "original_unit": "GB-month",
        "max_size_gb": 17592.186,  # 16 TiB
        "read_throughput_mb_s": 1048.576,  # 1000 MiB/s
        "source": "aws-terms",
        "source_url": EC2_URL,
        "scraped_at": EC2_AT,
        "verified_on": "2026-11-20",
        "evidence": (
            f'usd_per_gb_month,original_price: "SKU JG3KUJMBRGHV3N8G, EBS:VolumeUsage.gp3, 0.0800000000 USD per GB-Mo: '
            f'$0.08 per GB-month of General Purpose (gp3) provisioned storage - US East (N. Virginia)" <{EC2_URL}>'
            f' || max_size_gb: "Max Volume Size 16 TiB" <{EC2_URL}>'
            f' || read_throughput_mb_s: "Max throughput/volume 1000 MiB/s" <{EC2_URL}>'
        ),
        "notes": "max_size_gb and read_throughput_mb_s are the volume type's limits (GiB and MiB/s converted); the price is per GB-month provisioned",
    }
    records = {r["product"]: r for r in offers(items)}
    assert set(records) == {"EBS gp3", "EBS gp2"}  # not io2, st1, snapshots, IOPS/throughput or the Local Zone gp2
    assert records["EBS gp3"] == gp3
    assert (records["EBS gp2"]["usd_per_gb_month"], records["EBS gp2"]["read_throughput_mb_s"]) == (0.1, 262.144)


def test_transfer_file_yields_the_internet_egress_tiers_in_range_order():
    items = parse_fixture("aws-terms", TRANSFER_FILE)
    assert rejected(items) == []
    tiers = offers(items)
    assert [(t["tier"], t["from_gb"], t["to_gb"], t["usd_per_gb"]) for t in tiers] == [
        (1, 0.0, 10240.0, 0.09),
        (2, 10240.0, 51200.0, 0.085),
        (3, 51200.0, 153600.0, 0.07),
        (4, 153600.0, None, 0.05),
    ]
    assert tiers[0] == {
        "table": "scraped_egress_terms",
        "provider": "aws",
        "scope": "internet",
        "region": "us-east-1",
        "tier": 1,
        "from_gb": 0.0,
        "to_gb": 10240.0,
        "usd_per_gb": 0.09,
        "original_price": 0.09,
        "original_unit": "GB",
        "free_allowance_gb_month": None,
        "source": "aws-terms",
        "source_url": TRANSFER_URL,
        "scraped_at": TRANSFER_AT,
        "verified_on": "2026-11-20",
        "evidence": (
            'from_gb,to_gb,usd_per_gb,original_price: "SKU AQMWUY8XAJRAQFB7, DataTransfer-Out-Bytes, 0-10240 GB at 0.0900000000 USD per GB: '
            f'$0.090 per GB - first 10 TB / month data transfer out beyond the global free tier" <{TRANSFER_URL}>'
        ),
        "notes": None,
    }


def _body(path: str) -> bytes:
    return (FIXTURES / path).read_bytes()


def _replace_line(body: bytes, needle: bytes, old: bytes, new: bytes) -> bytes:
    lines = body.split(b"\n")
    hits = [i for i, line in enumerate(lines) if needle in line]
    assert hits, needle
    for i in hits:
        lines[i] = lines[i].replace(old, new)
    return b"\n".join(lines)


@pytest.mark.parametrize(
    ("path", "change", "message"),
    [
        (EC2_FILE, lambda b: b.replace(b'"Volume API Name"', b'"VolumeApiName"'), "lacks columns: Volume API Name"),
        (EC2_FILE, lambda b: b.replace(b"EBS:VolumeUsage.gp", b"EBS:VolUsage.gp"), "no EBS volume price"),
        (EC2_FILE, lambda b: b.replace(b'"OfferCode","AmazonEC2"', b'"OfferCode","AmazonS3"'), "carries no terms"),
        (TRANSFER_FILE, lambda b: b.replace(b'"AWS Outbound"', b'"Outbound"'), "no internet egress"),
        (TRANSFER_FILE, lambda b: b.replace(b'"From Region Code"', b'"fromRegionCode"'), "lacks columns: From Region Code"),
        (TRANSFER_FILE, lambda b: b.rstrip(b"\n"), "truncated"),
        (EC2_FILE, lambda b: b.split(b'"SKU"')[0], "no SKU header"),
    ],
    ids=["renamed-column", "usage-type-renamed", "other-offer", "no-egress-rows", "renamed-region-column", "cut-file", "no-header"],
)
def test_a_changed_file_fails_loudly(path, change, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("aws-terms", change(_body(path)))


@pytest.mark.parametrize(
    ("path", "needle", "old", "new", "reason"),
    [
        (EC2_FILE, b"JG3KUJMBRGHV3N8G", b'"0.0800000000"', b'"n/a"', "unparseable_number"),
        (EC2_FILE, b"JG3KUJMBRGHV3N8G", b'"GB-Mo"', b'"GB-Hrs"', "unexpected_price_dimension"),
        (EC2_FILE, b"HY3BZPP2B6K8MSJF", b'"USD"', b'"CNY"', "unexpected_price_dimension"),
        (TRANSFER_FILE, b"8EEUB22XNJ", b'"0.0900000000"', b'"0.09x"', "unparseable_number"),
        (TRANSFER_FILE, b"N54YRCYPQD", b'"USD"', b'"EUR"', "unexpected_price_dimension"),
        (TRANSFER_FILE, b"N54YRCYPQD", b'"GB","0.0850000000"', b'"TB","85.0"', "unexpected_price_dimension"),
    ],
)
def test_a_bad_value_is_rejected_with_a_reason(path, needle, old, new, reason):
    items = parse_bytes("aws-terms", _replace_line(_body(path), needle, old, new))
    reasons = [r for item in items if not isinstance(item, dict) for r in item.reasons]
    assert any(r.startswith(reason) for r in reasons), reasons


def test_a_rejected_egress_row_rejects_its_whole_schedule():
    items = parse_bytes("aws-terms", _replace_line(_body(TRANSFER_FILE), b"8EEUB22XNJ", b'"0.0900000000"', b'"x"'))
    assert [i for i in items if isinstance(i, dict)] == []  # no schedule with a hole in it


def test_a_negative_price_is_rejected_by_the_schema():
    from gpucat import pipeline
    from gpucat.scrapers import get_source

    items = parse_bytes("aws-terms", _replace_line(_body(EC2_FILE), b"JG3KUJMBRGHV3N8G", b'"0.0800000000"', b'"-0.08"'))
    [batch] = pipeline.validate_sources([(get_source("aws-terms"), _raw_items(items), 1)])
    storage = next(b for b in batch.batches if b.table == "scraped_storage_terms")
    assert storage.frame["product"].to_list() == ["EBS gp2"]
    assert any("usd_per_gb_month" in reason for r in storage.rejected for reason in r.reasons)


def _raw_items(items):
    from gpucat.schemas.records import ScrapedStorageTerm

    return [ScrapedStorageTerm(**{k: v for k, v in i.items() if k != "table"}) if isinstance(i, dict) else i for i in items]
