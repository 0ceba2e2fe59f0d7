from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.reference import gpu_models
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
    assert got == [
        ("A10", 1.1016), ("A100-40GB-AnyForm", 2.0988), ("A100-80GB-AnyForm", 2.4984), ("B200", 6.2496),
        ("H100-SXM", 3.9492), ("H200-141GB-AnyForm", 4.5396), ("L4", 0.7992), ("L40S", 1.9512), ("T4", 0.5904),
    ]
    # CPU and memory lines (per core-second, per GiB-second) are not GPU offers.
    assert not [o for o in offers(items()) if "core" in o["instance_type"] or "GiB" in o["instance_type"]]


def test_labels_that_do_not_name_the_form_factor_keep_their_memory_and_claim_no_form_factor():
    """"Nvidia H200" may be SXM or NVL and "Nvidia A100, 80 GB" SXM4 or PCIe: neither the page nor
    Modal's GPU guide says which, so each maps to its family's stand-in (form factor "Unstated",
    memory as stated), never to one board; nothing on the page is rejected for its GPU."""
    by_label = {o["gpu_name"]: (o["gpu_model"], o["gpu_memory_gb"]) for o in offers(items())}
    assert (by_label["Nvidia H200"], by_label["Nvidia A100, 80 GB"], by_label["Nvidia A100, 40 GB"]) == (
        ("H200-141GB-AnyForm", 141.0), ("A100-80GB-AnyForm", 80.0), ("A100-40GB-AnyForm", 40.0),
    )
    assert {gpu_models()[m].form_factor for m, _ in by_label.values() if m.endswith("-AnyForm")} == {"Unstated"}
    assert rejected(items()) == []


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Nvidia H100, 80 GB", "H100-80GB-AnyForm"),  # had the page dropped "SXM5": the memory kept, no form factor
        ("NVIDIA H100 SXM", "H100-SXM"),
        ("Nvidia A100 80GB PCIe", "A100-PCIe-80GB"),
        ("NVIDIA HGX B200", "B200"),
        ("Nvidia RTX PRO 6000", "RTX-PRO-6000-AnyEdition"),  # no edition named: the stand-in, not the Workstation row
        ("Nvidia H100", "ambiguous_gpu: 'Nvidia H100' could be H100-NVL, H100-PCIe, H100-SXM"),  # 80 or 94 GB: unsaid
    ],
)
def test_a_label_outside_the_table_goes_through_the_catalog_rules(label, expected):
    result = parse_bytes("modal", BODY.replace(b"Nvidia H100 SXM5", label.encode()))
    got = [r["gpu_model"] if isinstance(r, dict) else r.reasons[0] for r in result if (r["gpu_name"] if isinstance(r, dict) else r.row["label"]) == label]
    assert got == [expected]


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
