"""Crusoe's pricing page, on a real capture (2026-08-22, fixtures/crusoe/crusoe/NOTES.md).

Traps the real markup sets: the header "GPU model | On-demand | Current spot"; the GPU card class
reused by the CPU, storage, Kubernetes, fine-tuning, inference and Self-Serve Deployments cards
(one of which is a lookalike "NVIDIA H100 80GB HGX" endpoint at $5.50); an empty form-factor tag;
"Contact sales" in both markets. A changed layout still fails naming what it missed.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected, Skipped
from gpucat.scrapers import crusoe
from tests.scrapers.helpers import by_id, fixture_path, mock_fetcher, normalize_bytes, offers, parse_bytes, parse_fixture, rejected, skipped

FIXTURE = "crusoe/crusoe/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()
CONTACT = "no_price: 'Contact sales' is a sales contact, not a price"
NOT_GPU = "not_gpu_rental: a card outside the GPU model / On-demand / spot table"
H100_SPOT = BODY[BODY.index(b"<p>$3.90/GPU-hr</p>") :].split(b"Contact sales</a></p>", 1)[0] + b"Contact sales</a></p>"


def items():
    return parse_fixture("crusoe", FIXTURE)


def test_whole_record_h100_hgx_on_demand():
    assert by_id(items())["NVIDIA H100 80GB HGX/on_demand"] == {
        "table": "offers",
        "provider": "crusoe",
        "offer_id": "NVIDIA H100 80GB HGX/on_demand",
        "source": "crusoe",
        "instance_type": "NVIDIA H100 80GB HGX, per GPU",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "NVIDIA H100 80GB HGX",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 3.9,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 3.9,
        "usd_per_gpu_hour": 3.9,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://www.crusoe.ai/cloud/pricing",
        "scraped_at": datetime(2026, 8, 22, tzinfo=UTC),
    }


def test_every_gpu_card_under_the_gpu_model_header_with_form_factor_from_its_tags():
    got = sorted((o["offer_id"], o["gpu_model"], o["gpu_memory_gb"], o["usd_per_gpu_hour"]) for o in offers(items()))
    assert got == [
        ("AMD MI300X 192GB/on_demand", "MI300X", 192.0, 3.45),
        ("NVIDIA A100 80GB PCIe/on_demand", "A100-PCIe-80GB", 80.0, 2.0),
        ("NVIDIA A100 80GB SXM/on_demand", "A100-SXM4-80GB", 80.0, 2.3),
        ("NVIDIA H100 80GB HGX/on_demand", "H100-SXM", 80.0, 3.9),
        ("NVIDIA H200 141GB HGX/on_demand", "H200-SXM", 141.0, 4.29),
        # The L40S card's form-factor tag is present but empty ("w-dyn-bind-empty").
        ("NVIDIA L40S 48GB/on_demand", "L40S", 48.0, 1.5),
    ]


def test_cards_of_the_other_tables_are_skipped_and_counted_never_priced():
    got = items()
    # CPU 2, storage 4, Kubernetes 1, fine-tuning 4, serverless inference 18, Self-Serve Deployments 2.
    assert skipped(got) == {NOT_GPU: 31}
    [skip] = [i for i in got if isinstance(i, Skipped)]
    assert skip.examples == (
        "CPU instances pricing: General-purpose",
        "CPU instances pricing: Storage-optimized",
        "Storage pricing: Persistent disks",
        "Storage pricing: Shared disks",
        "Storage pricing: Container registry usage",
    )
    # The Self-Serve Deployments "NVIDIA H100 80GB HGX" card ($5.50 a managed endpoint-hour) and the
    # per-vCPU CPU prices never become offers.
    assert BODY.count(b"<p>$5.50</p>") == 1
    assert [o["price"] for o in offers(got) if "H100" in o["offer_id"]] == [3.9]
    assert not [o for o in offers(got) if o["price"] in (5.5, 6.0, 0.04, 0.09)]


def test_contact_sales_is_rejected_per_card_naming_each_market_never_priced_zero():
    assert [(r.row["name"], r.row["tags"], r.reasons) for r in rejected(items())] == [
        ("NVIDIA GB200", ["186GB", "NVL72"], ("on_demand " + CONTACT, "spot " + CONTACT)),
        ("NVIDIA B200", ["180GB", "HGX"], ("on_demand " + CONTACT, "spot " + CONTACT)),
        ("NVIDIA H200", ["141GB", "HGX"], ("spot " + CONTACT,)),
        ("NVIDIA H100", ["80GB", "HGX"], ("spot " + CONTACT,)),
        ("NVIDIA A100", ["80GB", "SXM"], ("spot " + CONTACT,)),
        ("NVIDIA A100", ["80GB", "PCIe"], ("spot " + CONTACT,)),
        ("NVIDIA L40S", ["48GB"], ("spot " + CONTACT,)),
        ("AMD MI355X", ["288GB"], ("on_demand " + CONTACT, "spot " + CONTACT)),
        ("AMD MI300X", ["192GB"], ("spot " + CONTACT,)),
    ]


def test_the_current_spot_column_is_the_spot_market_when_it_holds_a_price():
    body = BODY.replace(H100_SPOT, b"<p>$3.90/GPU-hr</p></div><div class=\"pricing-rich w-richtext\"><p>$1.60/GPU-hr</p>", 1)
    assert body != BODY
    spot = [r for r in parse_bytes("crusoe", body) if isinstance(r, dict) and r["market"] == "spot"]
    assert [(r["offer_id"], r["price"]) for r in spot] == [("NVIDIA H100 80GB HGX/spot", 1.6)]


@pytest.mark.parametrize(
    ("header", "markets"),
    [(b"Current spot", ("on_demand", "spot")), (b"Spot", ("on_demand", "spot")), (b"  CURRENT   SPOT ", ("on_demand", "spot"))],
    ids=["as-served", "plain", "case-and-space"],
)
def test_the_column_labels_match_case_and_whitespace_insensitively(header, markets):
    body = BODY.replace(b'<div class="pricing-heading is-d">Current spot</div>', b'<div class="pricing-heading is-d">' + header + b"</div>", 1)
    [gb200] = [r for r in parse_bytes("crusoe", body) if isinstance(r, Rejected) and r.row["name"] == "NVIDIA GB200"]
    assert tuple(reason.split()[0] for reason in gb200.reasons) == markets


@pytest.mark.parametrize(
    ("quote", "reason"),
    [
        ("", "on_demand no_price: blank price cell ''"),
        ("$3.90/hr", "on_demand unexpected_unit: '$3.90/hr' is not priced per GPU-hour"),
        ("$31.20/instance-hr", "on_demand unexpected_unit: '$31.20/instance-hr' is not priced per GPU-hour"),
        ("Coming soon", "on_demand no_price: 'Coming soon' holds no dollar amount"),
    ],
    ids=["blank", "per-hour", "per-instance", "no-amount"],
)
def test_a_price_that_is_not_per_gpu_hour_is_rejected_not_guessed(quote, reason):
    result = parse_bytes("crusoe", BODY.replace(b"<p>$3.90/GPU-hr</p>", f"<p>{quote}</p>".encode()))
    assert "NVIDIA H100 80GB HGX/on_demand" not in [r["offer_id"] for r in result if isinstance(r, dict)]
    [h100] = [r for r in result if isinstance(r, Rejected) and r.row["name"] == "NVIDIA H100"]
    assert h100.reasons == (reason, "spot " + CONTACT)


@pytest.mark.parametrize(
    ("heading", "tags", "model"),
    [
        ("AMD MI355X", ("288GB", ""), "MI355X"),  # the real card, once it shows a price
        ("AMD Instinct MI355X", ("288GB", ""), "MI355X"),  # a card the table lacks goes through the rules
        ("NVIDIA B300", ("288GB", "HGX"), "B300"),
        ("NVIDIA HGX B200", ("180GB", ""), "B200"),
        ("NVIDIA H100", ("80GB", "SXM5"), "H100-SXM"),
        ("NVIDIA A100", ("40GB", ""), "A100-40GB-AnyForm"),  # no form-factor tag: the stand-in, never a guess
        ("NVIDIA RTX PRO 6000", ("96GB", ""), "RTX-PRO-6000-AnyEdition"),
    ],
)
def test_a_priced_card_maps_by_its_table_or_else_by_the_catalog_rules(heading, tags, model):
    """The MI355X card (Contact sales today) and cards a real page may add or respell map when priced."""
    start = BODY.index(b'<h4 class="pricing-item-heading">AMD MI355X</h4>')
    end = BODY.index(b'<div class="pricing-rich w-richtext">', start)
    card_head = BODY[start:end]
    tags_html = "".join(f'<div class="pricing-tag">{t}</div>' for t in tags if t)
    new_head = card_head.replace(b"AMD MI355X", heading.encode())
    new_head = new_head[: new_head.index(b'<div class="pricing_tags-wr">')] + f'<div class="pricing_tags-wr">{tags_html}</div></a>'.encode()
    price_start = end
    contact_end = BODY.index(b"</div>", BODY.index(b"Contact sales", price_start)) + len(b"</div>")
    body = BODY[:start] + new_head + b'<div class="pricing-rich w-richtext"><p>$2.50/GPU-hr</p></div>' + BODY[contact_end:]
    result = normalize_bytes("crusoe", body)
    got = [r["gpu_model"] for r in result if isinstance(r, dict) and r["price"] == 2.5]  # the respelled card's own offer
    assert got == [model]


@pytest.mark.parametrize("quote", ["$3.90/GPU-hr", "$3.90 / GPU-hour", "$3.90/GPU/hr", "$3.90 per GPU hour", "$3.90/gpu-hr\u00b9", "$3.90/GPU-Hrs"])
def test_near_spellings_of_the_per_gpu_hour_unit_are_read_as_it(quote):
    result = parse_bytes("crusoe", BODY.replace(b"<p>$3.90/GPU-hr</p>", f"<p>{quote}</p>".encode()))
    [h100] = [r for r in result if isinstance(r, dict) and r["offer_id"] == "NVIDIA H100 80GB HGX/on_demand"]
    assert (h100["gpu_model"], h100["price"], h100["price_unit"]) == ("H100-SXM", 3.9, "gpu_hour")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b'class="pricing_gpu-item"', b'class="pricing_card"', r"no GPU cards \(.pricing_gpu-item\) under the header row"),
        (b'<div class="pricing-heading is-d">Current spot</div>', b'<div class="pricing-heading is-d">Reserved</div>', "column 'Reserved' is neither on-demand nor spot"),
        (b'<div class="pricing-heading is-d">GPU model</div>', b'<div class="pricing-heading is-d">Accelerator</div>', "no header row 'GPU model'"),
        (b'<div class="pricing-heading is-d">On-demand</div><div class="pricing-heading is-d">Current spot</div>', b'<div class="pricing-heading is-d">Hourly</div><div class="pricing-heading is-d">Current spot</div>', "no header row 'GPU model'"),
        (b'<h4 class="pricing-item-heading">NVIDIA H100</h4>', b"<h4>NVIDIA H100</h4>", r"GPU card without a heading \(.pricing-item-heading\)"),
        (b'<div class="pricing-rich w-richtext"><p>$3.90/GPU-hr</p></div>', b"", "has 1 price blocks for columns"),
    ],
    ids=["cards-renamed", "column-label-renamed", "first-column-renamed", "on-demand-renamed", "heading-gone", "price-block-gone"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new)
    assert body != BODY
    with pytest.raises(ParseError, match=message):
        parse_bytes("crusoe", body)


def test_fetch_gets_the_pricing_page(tmp_path):
    seen = []

    def handler(request):
        seen.append(str(request.url))
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    [page] = crusoe.fetch(mock_fetcher(crusoe.SOURCE, handler, tmp_path))
    assert seen == [crusoe.URL]
    assert page.path.read_bytes() == BODY
