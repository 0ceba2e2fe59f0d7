from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers.aws_spot_advisor import band_bounds
from tests.scrapers.helpers import offers, parse_bytes, parse_fixture, rejected


def records():
    return offers(parse_fixture("aws-spot-advisor", "aws/aws-spot-advisor/spot-advisor-data.json"))


def test_every_region_os_and_type_becomes_a_record():
    items = parse_fixture("aws-spot-advisor", "aws/aws-spot-advisor/spot-advisor-data.json")
    assert (len(offers(items)), rejected(items)) == (83, [])


def test_whole_record_p5_us_east_1():
    [record] = [r for r in records() if (r["region"], r["os"], r["instance_type"]) == ("us-east-1", "Linux", "p5.48xlarge")]
    assert record == {
        "table": "interruption_rates",
        "provider": "aws",
        "region": "us-east-1",
        "instance_type": "p5.48xlarge",
        "os": "Linux",
        "source": "aws-spot-advisor",
        "interruption_band": "<5%",
        "band_lower_pct": 0.0,
        "band_upper_pct": 5.0,
        "savings_pct": 57.0,
        "source_url": "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json",
        "scraped_at": datetime(2026, 11, 20, 6, 0, 5, tzinfo=UTC),
    }


@pytest.mark.parametrize(
    ("label", "bounds"),
    [("<5%", (0.0, 5.0)), ("5-10%", (5.0, 10.0)), ("10-15%", (10.0, 15.0)), ("15-20%", (15.0, 20.0)), (">20%", (20.0, 100.0))],
)
def test_band_labels_not_max_values_give_the_bounds(label, bounds):
    assert band_bounds(label) == bounds


def test_unknown_band_index_is_rejected():
    body = b'{"ranges":[{"index":0,"label":"<5%","dots":0,"max":5}],"spot_advisor":{"us-east-1":{"Linux":{"p5.48xlarge":{"s":57,"r":7}}}}}'
    [item] = parse_bytes("aws-spot-advisor", body)
    assert item.reasons == ("unknown_band_index: 7",)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"ranges":[{"index":0,"label":"about 5","dots":0,"max":5}],"spot_advisor":{}}', "unrecognised interruption band"),
        (b'{"ranges":[],"advisor":{}}', "lacks spot_advisor"),
        (b'{"ranges":[{"index":0,', "not JSON"),
    ],
    ids=["new-label", "renamed", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("aws-spot-advisor", body)
