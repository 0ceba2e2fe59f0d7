from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from tests.scrapers.helpers import (
    by_id,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    skipped,
)


def test_whole_record_p5_spot():
    record = by_id(parse_fixture("aws-spot", "aws/aws-spot/spot.json"))["p5.48xlarge/us-east-1/spot"]
    assert record == {
        "table": "offers",
        "provider": "aws",
        "offer_id": "p5.48xlarge/us-east-1/spot",
        "source": "aws-spot",
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "market": "spot",
        "tier": None,
        "gpu_name": "p5",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 192.0,
        "ram_gb": 2199.023,
        "price": 23.6672,
        "price_unit": "instance_hour",
        "currency": "USD",
        "usd_per_hour": 23.6672,
        "usd_per_gpu_hour": 2.9584,
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
        "source_url": "https://website.spot.ec2.aws.a2z.com/spot.json",
        "scraped_at": datetime(2026, 11, 20, 6, 0, 4, tzinfo=UTC),
    }


def test_gpu_entries_become_offers_and_the_rest_is_rejected_with_reasons():
    items = parse_fixture("aws-spot", "aws/aws-spot/spot.json")
    # 52 GPU entries with a usable Linux price plus inf2 and trn1 (NOTES.md): every one maps now.
    assert len(offers(items)) == 54
    assert all(o["market"] == "spot" and o["usd_per_hour"] > 0 for o in offers(items))
    assert sorted((r.row["instance_type"], r.row["region"], r.reasons) for r in rejected(items)) == [
        ("p5.48xlarge", "eu-central-1", ("no_price: 'N/A*'",)),
        ("p6-b200.48xlarge", "us-east-1", ("no_price: '0'",)),
        ("p6-b200.48xlarge", "us-west-2", ("no_price: '0'",)),
    ]


def test_non_gpu_types_are_skipped_and_counted_not_rejected():
    items = parse_fixture("aws-spot", "aws/aws-spot/spot.json")
    assert skipped(items) == {"not_gpu: not an accelerated instance family": 11}
    assert not [i for i in by_id(items) if i.split(".")[0] in ("m6i", "c7i", "t3", "m7g")]


@pytest.mark.parametrize(
    ("offer_id", "gpu_model", "gpu_count", "gpu_memory_gb"),
    [
        ("g4ad.xlarge/us-east-1/spot", "Radeon-Pro-V520", 1.0, 8.0),
        ("g4ad.16xlarge/us-east-1/spot", "Radeon-Pro-V520", 4.0, 8.0),
        ("g6f.large/us-east-1/spot", "L4", 0.125, 3.0),
        ("g7e.2xlarge/us-west-2/spot", "RTX-PRO-6000-Server", 1.0, 96.0),
        ("inf2.xlarge/us-east-1/spot", "Inferentia2", 1.0, 34.36),
        ("trn1.32xlarge/us-east-1/spot", "Trainium", 16.0, 34.36),
    ],
)
def test_families_a_real_feed_lost_now_map(offer_id, gpu_model, gpu_count, gpu_memory_gb):
    record = by_id(parse_fixture("aws-spot", "aws/aws-spot/spot.json"))[offer_id]
    assert (record["gpu_model"], record["gpu_count"], record["gpu_memory_gb"]) == (gpu_model, gpu_count, gpu_memory_gb)


def test_fractional_gpu_prices_per_whole_gpu():
    record = by_id(parse_fixture("aws-spot", "aws/aws-spot/spot.json"))["g6f.large/us-east-1/spot"]
    assert (record["usd_per_hour"], record["usd_per_gpu_hour"], record["vcpus"], record["interconnect"]) == (0.0489, 0.3912, 2.0, None)


def test_legacy_jsonp_body_with_old_region_names():
    items = parse_fixture("aws-spot", "aws/aws-spot/spot.js")
    regions = {o["region"] for o in offers(items)}
    assert "us-east-1" in regions and "eu-west-1" in regions
    assert not regions & {"us-east", "eu-ireland", "apac-sin", "apac-tokyo"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"callback({\"vers\":0.01,\"config\":{\"regions\":[]}", "truncated"),
        (b'{"vers":0.01,"config":{"rates":[]}}', "lacks config.regions"),
        (b'{"config":{"regions":[{"region":"us-east-1","instanceTypes":[{"type":"gpu","sizes":[{"size":"p5.48xlarge","columns":[]}]}]}]}}', "KeyError: 'valueColumns'"),
        (b"<html>503</html>", "not JSON"),
    ],
    ids=["truncated-jsonp", "renamed-top-level", "renamed-field", "html"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("aws-spot", body)


def test_every_instance_in_the_table_decodes_as_a_gpu_offer():
    from gpucat.scrapers import _aws

    assert {t: _aws.decode(t).kind for t in _aws.INSTANCES if _aws.decode(t).kind != "gpu"} == {}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"vers": 0.01}', "lacks config.regions"),
        (b'{"config": {"regions": [{"region": "us-east-1", "instanceTypes": [{"sizes": [{"size": "p5.48xlarge"}]}]}]}}', "KeyError: 'valueColumns'"),
        (b'{"config": {"regions": [', "not JSON"),
    ],
    ids=["renamed", "field-missing", "truncated"],
)
def test_malformed_payload_is_one_cli_error_line(tmp_path, body, message):
    from typer.testing import CliRunner

    from gpucat.cli import app

    runner = CliRunner()
    path = tmp_path / "spot.json"
    path.write_bytes(body)
    result = runner.invoke(app, ["parse", "aws-spot", str(path)])
    assert result.exit_code == 1
    assert message in result.stderr.strip() and len(result.stderr.strip().splitlines()) == 1
