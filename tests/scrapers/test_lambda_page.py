"""Lambda's pricing page, on a real capture (2026-08-22, fixtures/lambda/lambda-page/NOTES.md).

Traps the real markup sets: the 1-Click Clusters tabs ("NVIDIA HGX B200", "NVIDIA H100") use the
same ARIA tab and table markup as the "8x/4x/2x/1x" instance tabs and come first; hidden panels;
two "NVIDIA A100 SXM" rows in one tab told apart by VRAM; a "PRICE/GPU/HR*" header with a footnote
mark. An unknown tab is skipped and counted, never a reason to abort; a page with no instance-size
tab still fails, naming what it missed.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Skipped
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import all_sources, lambda_page
from tests.scrapers.helpers import by_id, fixture_path, mock_fetcher, normalize_bytes, offers, parse_bytes, parse_fixture, rejected, skipped

FIXTURE = "lambda/lambda-page/pricing.html"
BODY = fixture_path(FIXTURE).read_bytes()
NOT_INSTANCE = "not_instance_tab: a tab that is not an instance size ('Nx'), e.g. 1-Click Clusters"


def items():
    return parse_fixture("lambda-page", FIXTURE)


def test_whole_record_8x_h100_sxm_priced_per_gpu_hour():
    assert by_id(items())["page/8x/NVIDIA H100 SXM 80 GB"] == {
        "table": "offers",
        "provider": "lambda",
        "offer_id": "page/8x/NVIDIA H100 SXM 80 GB",
        "source": "lambda-page",
        "instance_type": "8x NVIDIA H100 SXM 80 GB",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "NVIDIA H100 SXM",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 208.0,
        "ram_gb": 1932.735,
        "price": 3.99,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 31.92,
        "usd_per_gpu_hour": 3.99,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://lambda.ai/pricing",
        "scraped_at": datetime(2026, 8, 22, tzinfo=UTC),
    }


def test_every_instance_offer_takes_its_gpu_count_from_its_tab():
    got = sorted((o["offer_id"], o["gpu_model"], o["gpu_count"], o["usd_per_gpu_hour"]) for o in offers(items()))
    assert got == [
        ("page/1x/NVIDIA A10 24 GB", "A10", 1.0, 1.29),
        ("page/1x/NVIDIA A100 PCIe 40 GB", "A100-PCIe-40GB", 1.0, 1.99),
        ("page/1x/NVIDIA A100 SXM 40 GB", "A100-SXM4-40GB", 1.0, 1.99),
        ("page/1x/NVIDIA A6000 48 GB", "RTX-A6000", 1.0, 1.09),
        ("page/1x/NVIDIA B200 SXM6 180 GB", "B200", 1.0, 6.99),
        ("page/1x/NVIDIA GH200 96 GB", "GH200", 1.0, 2.29),
        ("page/1x/NVIDIA H100 PCIe 80 GB", "H100-PCIe", 1.0, 3.29),
        ("page/1x/NVIDIA H100 SXM 80 GB", "H100-SXM", 1.0, 4.29),
        ("page/1x/NVIDIA Quadro RTX 6000 24 GB", "Quadro-RTX-6000", 1.0, 0.69),
        ("page/2x/NVIDIA A100 PCIe 40 GB", "A100-PCIe-40GB", 2.0, 1.99),
        ("page/2x/NVIDIA A6000 48 GB", "RTX-A6000", 2.0, 1.09),
        ("page/2x/NVIDIA B200 SXM6 180 GB", "B200", 2.0, 6.89),
        ("page/2x/NVIDIA H100 SXM 80 GB", "H100-SXM", 2.0, 4.19),
        ("page/4x/NVIDIA A100 PCIe 40 GB", "A100-PCIe-40GB", 4.0, 1.99),
        ("page/4x/NVIDIA A6000 48 GB", "RTX-A6000", 4.0, 1.09),
        ("page/4x/NVIDIA B200 SXM6 180 GB", "B200", 4.0, 6.79),
        ("page/4x/NVIDIA H100 SXM 80 GB", "H100-SXM", 4.0, 4.09),
        ("page/8x/NVIDIA A100 SXM 40 GB", "A100-SXM4-40GB", 8.0, 1.99),
        ("page/8x/NVIDIA A100 SXM 80 GB", "A100-SXM4-80GB", 8.0, 2.79),
        ("page/8x/NVIDIA B200 SXM6 180 GB", "B200", 8.0, 6.69),
        ("page/8x/NVIDIA H100 SXM 80 GB", "H100-SXM", 8.0, 3.99),
        ("page/8x/NVIDIA Tesla V100 16 GB", "V100-16GB-AnyForm", 8.0, 0.79),
    ]


def test_cluster_tabs_are_skipped_and_their_rows_counted_never_read_and_never_fatal():
    got = items()
    assert skipped(got) == {NOT_INSTANCE: 8}
    [skip] = [i for i in got if isinstance(i, Skipped)]
    assert skip.examples == ("NVIDIA HGX B200", "NVIDIA H100")
    # The committed cluster prices ($9.86 ... $5.54 per GPU-hour) never become offers.
    assert not [o for o in offers(got) if o["price"] in (9.86, 9.36, 8.87, 6.16, 5.85, 5.54)]


@pytest.mark.parametrize("label", ["8 x", "8\u00d7", "8x GPUs", "8 GPUs"])
def test_near_spellings_of_an_instance_size_tab_are_read_as_it(label):
    body = BODY.replace(b">8x<", f">{label}<".encode())
    assert body != BODY
    got = sorted(o["offer_id"] for o in parse_bytes("lambda-page", body) if isinstance(o, dict) and o["gpu_count"] == 8.0)
    assert got == sorted(o["offer_id"] for o in offers(items()) if o["gpu_count"] == 8.0)


@pytest.mark.parametrize("label", [b"16x", b"Reserved", b"Eight GPUs"], ids=["other-size", "other-word", "reworded-size"])
def test_an_unknown_tab_is_skipped_and_counted_not_an_abort(label):
    body = BODY.replace(b'tab-button">4x</button>', b'tab-button">' + label + b"</button>", 1)
    assert body != BODY
    result = parse_bytes("lambda-page", body)
    ids = {r["offer_id"] for r in result if isinstance(r, dict)}
    assert "page/8x/NVIDIA H100 SXM 80 GB" in ids and "page/1x/NVIDIA H100 SXM 80 GB" in ids
    if label == b"16x":
        assert "page/16x/NVIDIA H100 SXM 80 GB" in ids
    else:
        assert not [i for i in ids if i.startswith("page/4x/")]
        [skip] = [r for r in result if isinstance(r, Skipped)]
        assert (skip.count, skip.examples) == (12, ("NVIDIA HGX B200", "NVIDIA H100", label.decode()))


def test_a_plan_that_does_not_name_its_form_factor_keeps_its_memory_and_claims_no_form_factor():
    """The real page's "NVIDIA Tesla V100" (16 GB) says neither SXM2 nor PCIe: the catalog rules give
    the stand-in V100-16GB-AnyForm (form factor "Unstated"), and nothing on the page is rejected."""
    [v100] = [o for o in offers(items()) if o["gpu_name"] == "NVIDIA Tesla V100"]
    assert (v100["gpu_model"], v100["gpu_memory_gb"], gpu_models()[v100["gpu_model"]].form_factor) == ("V100-16GB-AnyForm", 16.0, "Unstated")
    assert rejected(items()) == []


def test_an_unknown_plan_is_rejected_as_unknown_gpu_not_dropped():
    body = BODY.replace(b"NVIDIA Quadro RTX 6000", b"NVIDIA Quadro RTX 9000")
    assert body != BODY
    got = [(r.row.get("Plan") or r.row.get("gpu_name"), r.reasons) for r in rejected(normalize_bytes("lambda-page", body))]
    assert ("NVIDIA Quadro RTX 9000", ("unknown_gpu: 'NVIDIA Quadro RTX 9000'",)) in got


@pytest.mark.parametrize("cell", ["Contact sales", "", "—", "Sold out"], ids=["contact", "blank", "dash", "no-amount"])
def test_a_price_cell_without_a_price_is_rejected(cell):
    body = BODY.replace(b'<td data-label="PRICE/GPU/HR*">$4.29</td>', f'<td data-label="PRICE/GPU/HR*">{cell}</td>'.encode())
    assert body != BODY
    result = parse_bytes("lambda-page", body)
    assert "page/1x/NVIDIA H100 SXM 80 GB" not in [r["offer_id"] for r in result if isinstance(r, dict)]
    assert [r.row["Plan"] for r in result if not isinstance(r, dict | Skipped) and r.reasons[0].startswith("no_price")] == ["NVIDIA H100 SXM"]


def test_the_page_is_the_keyless_fallback_it_needs_no_key_and_never_shares_an_offer_id_with_the_api():
    source = all_sources()["lambda-page"]
    assert (source.provider, source.api_key_env, source.api_key_required) == ("lambda", None, False)
    assert all(o["offer_id"].startswith("page/") for o in offers(items()))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b'role="tabpanel"', b'role="region"', r"tab panels \(role=tabpanel\): nothing found"),
        (b"tab-button\">8x<", b"tab-button\">Eight<", None),
        (b'<th scope="col">PRICE/GPU/HR*</th></tr></thead><tbody><tr class="_pricingRow_3954x_36" data-plan="NVIDIA B200 SXM6">', b'<th scope="col">PRICE/HR</th></tr></thead><tbody><tr class="_pricingRow_3954x_36" data-plan="NVIDIA B200 SXM6">', r"8x tab: no <table> with headers \['Plan', 'VRAM/GPU', 'PRICE/GPU/HR'\]"),
        (b'<th scope="col">vCPUs</th>', b'<th scope="col">CPU cores</th>', "8x tab: no column 'vCPUs'"),
        (b'aria-controls="tabpanel-:island-adac26na8ba91R19-R0:-1" id="tab-:island-adac26na8ba91R19-R0:-1"', b'id="tab-x"', "tabpanel 'tabpanel-:island-adac26na8ba91R19-R0:-1' has no tab button naming it"),
        (b'<td data-label="STORAGE">22 TiB SSD</td>', b"", "a row has 5 cells under 6 headers"),
    ],
    ids=["tabs-gone", "control-one-size-renamed", "price-header-renamed", "vcpu-header-renamed", "tab-unnamed", "cell-missing"],
)
def test_a_changed_layout_fails_loudly_naming_what_it_missed(old, new, message):
    body = BODY.replace(old, new, -1 if old == b'role="tabpanel"' else 1)
    assert body != BODY
    if message is None:
        assert parse_bytes("lambda-page", body)
        return
    with pytest.raises(ParseError, match=message):
        parse_bytes("lambda-page", body)


def test_a_page_with_no_instance_size_tab_fails_naming_the_tabs_it_saw():
    body = BODY
    for size in (b"8x", b"4x", b"2x", b"1x"):
        body = body.replace(b'tab-button">' + size + b"</button>", b'tab-button">Plan ' + size + b"</button>", 1)
    with pytest.raises(ParseError, match=r"no instance-size tab \('8x', '4x', ...\) among the tabs \['NVIDIA HGX B200', 'NVIDIA H100', 'Plan 8x'"):
        parse_bytes("lambda-page", body)


def test_a_tab_with_an_empty_table_fails_instead_of_loading_nothing():
    start = BODY.index(b'<tr class="_pricingRow_3954x_36" data-plan="NVIDIA B200 SXM6"><th scope="row" style="width:31%" data-label="Plan">NVIDIA B200 SXM6</th><td data-label="VRAM/GPU">180 GB</td><td data-label="vCPUs">52')
    end = BODY.index(b"</tbody>", start)
    with pytest.raises(ParseError, match="2x tab rows: nothing found"):
        parse_bytes("lambda-page", BODY[:start] + BODY[end:])


def test_fetch_gets_the_pricing_page_without_a_key(tmp_path):
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, content=BODY, headers={"content-type": "text/html"})

    [page] = lambda_page.fetch(mock_fetcher(lambda_page.SOURCE, handler, tmp_path))
    assert [str(r.url) for r in seen] == [lambda_page.URL]
    assert "authorization" not in seen[0].headers
    assert page.path.read_bytes() == BODY
