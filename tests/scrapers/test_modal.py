from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.scrapers import modal
from tests.scrapers.helpers import (
    by_id,
    fixture_path,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

FIXTURE = "modal/modal/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()


def items():
    return parse_fixture("modal", FIXTURE)


def test_whole_record_h100_converted_from_per_second_explicitly():
    assert by_id(items())["Nvidia H100 SXM5/on_demand"] == {
        "table": "offers",
        "provider": "modal",
        "offer_id": "Nvidia H100 SXM5/on_demand",
        "source": "modal",
        "instance_type": "Nvidia H100 SXM5 at $0.001097/s",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "Nvidia H100 SXM5",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 3.9492,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 3.9492,
        "usd_per_gpu_hour": 3.9492,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://modal.com/pricing",
        "scraped_at": datetime(2026, 11, 20, 6, 1, 4, tzinfo=UTC),
    }


def test_every_gpu_line_is_one_offer_at_3600_times_the_per_second_rate():
    got = sorted((o["gpu_model"], o["price"]) for o in offers(items()))
    assert got == [("A10", 1.1016), ("B200", 6.2496), ("H100-SXM", 3.9492), ("L4", 0.7992), ("L40S", 1.9512), ("T4", 0.5904)]
    # CPU and memory lines (per core-second, per GiB-second) are not GPU offers.
    assert not [o for o in offers(items()) if "core" in o["instance_type"] or "GiB" in o["instance_type"]]


def test_labels_that_do_not_name_the_form_factor_are_rejected_not_guessed():
    assert [(r.row["label"], r.reasons) for r in rejected(items())] == [
        ("Nvidia H200", ("ambiguous_form_factor: 'Nvidia H200' may be H200-SXM or H200-NVL; the page does not say",)),
        ("Nvidia A100, 80 GB", ("ambiguous_form_factor: 'Nvidia A100, 80 GB' may be A100-SXM4-80GB or A100-PCIe-80GB; the page does not say",)),
        ("Nvidia A100, 40 GB", ("ambiguous_form_factor: 'Nvidia A100, 40 GB' may be A100-SXM4-40GB or A100-PCIe-40GB; the page does not say",)),
    ]


@pytest.mark.parametrize(
    "quote",
    ["$3.95 / hr", "$0.001097 / GPU / sec", "$0.001097", "$0.066 / min"],
    ids=["per-hour", "extra-words", "no-unit", "per-minute"],
)
def test_a_price_in_another_unit_is_rejected_not_converted(quote):
    result = parse_bytes("modal", BODY.replace(b"$0.001097 / sec", quote.encode()))
    assert "Nvidia H100 SXM5/on_demand" not in [r["offer_id"] for r in result if isinstance(r, dict)]
    [reject] = [r for r in result if not isinstance(r, dict) and r.row["label"] == "Nvidia H100 SXM5"]
    assert reject.reasons == (f"unexpected_unit: {quote!r} is not a price per second",)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b"<h3>GPU Tasks</h3>", b"<h3>GPUs</h3>", "no heading 'GPU Tasks'"),
        (b'<span class="price-value">', b'<span class="price-value">from ', r"'GPU Tasks' price list: label and '\$... / sec' pairs: nothing found"),
    ],
    ids=["heading-renamed", "prices-not-dollars"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new)
    assert body != BODY
    with pytest.raises(ParseError, match=message):
        parse_bytes("modal", body)


def test_fetch_gets_the_pricing_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    source = modal.SOURCE
    [page] = modal.fetch(mock_fetcher(source, handler, tmp_path))
    assert seen == [modal.URL]
    assert page.path.read_bytes() == BODY
