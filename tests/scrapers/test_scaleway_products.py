from __future__ import annotations

import json
from datetime import UTC, date, datetime

import httpx
import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from gpucat.scrapers import scaleway_products
from tests.conftest import FIXTURES, fixture_pages
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    normalize_bytes,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

FOLDER = "scaleway/scaleway-products"
FILES = [f"{FOLDER}/{name}" for name in ("fr-par-1-page-1.json", "fr-par-2-page-1.json", "fr-par-2-page-2.json", "pl-waw-2-page-1.json")]
PAR2 = "https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers?per_page=100&page=1"


def items():
    return parse_fixture("scaleway-products", *FILES)


def test_whole_record_h100_sxm_8_in_par2():
    assert by_id(items())["H100-SXM-8-80G/fr-par-2/on_demand"] == {
        "table": "offers",
        "provider": "scaleway",
        "offer_id": "H100-SXM-8-80G/fr-par-2/on_demand",
        "source": "scaleway-products",
        "instance_type": "H100-SXM-8-80G",
        "region": "fr-par-2",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "H100-SXM",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,  # the nameplate, not the 85.9 GB the API's 80 GiB is
        "vcpus": 128.0,
        "ram_gb": 1030.792,  # 960 GiB
        "price": 25.3308,
        "price_unit": "instance_hour",
        "currency": "EUR",
        "usd_per_hour": round(25.3308 * 1.0705, 6),  # the fixtures' ECB rate, 1 EUR = 1.0705 USD
        "usd_per_gpu_hour": round(25.3308 * 1.0705 / 8, 6),
        "fx_rate_date": date(2024, 6, 28),
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvlink",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": PAR2,
        "scraped_at": datetime(2024, 7, 1, 6, 0, 11, tzinfo=UTC),
    }


def test_pcie_and_sxm_sizes_stay_different_models():
    ids = by_id(items())
    two_pcie, two_sxm = ids["H100-2-80G/fr-par-2/on_demand"], ids["H100-SXM-2-80G/fr-par-2/on_demand"]
    assert (two_pcie["gpu_model"], two_pcie["gpu_count"], two_pcie["interconnect"]) == ("H100-PCIe", 2.0, None)
    assert (two_sxm["gpu_model"], two_sxm["gpu_count"], two_sxm["interconnect"]) == ("H100-SXM", 2.0, "nvlink")
    assert ids["B300-SXM-8-288G/fr-par-2/on_demand"]["gpu_model"] == "B300"


def test_every_zone_and_page_is_read_and_cpu_types_are_not_offers():
    result = items()
    zones = {o["region"] for o in offers(result)}
    assert zones == {"fr-par-1", "fr-par-2", "pl-waw-2"}
    assert len(offers(result)) == 23
    assert not [o for o in offers(result) if o["gpu_count"] < 1 or o["instance_type"].startswith(("DEV1", "POP2", "PLAY2"))]
    # RENDER-S sits on fr-par-2's second page: "P100" with 16 GiB leaves one catalog model (the
    # reference table's only P100 is the PCIe card), once per zone; nothing is rejected.
    render = sorted((o["region"], o["gpu_model"], o["gpu_name"]) for o in offers(result) if o["instance_type"] == "RENDER-S")
    assert render == [("fr-par-1", "P100-PCIe-16GB", "P100"), ("fr-par-2", "P100-PCIe-16GB", "P100")]
    assert rejected(result) == []


def test_fetch_walks_pages_until_a_short_one():
    urls = [page.url for page in fixture_pages("scaleway-products")]
    assert urls == [
        "https://api.scaleway.com/instance/v1/zones/fr-par-1/products/servers?per_page=100&page=1",
        PAR2,
        "https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers?per_page=100&page=2",
        "https://api.scaleway.com/instance/v1/zones/pl-waw-2/products/servers?per_page=100&page=1",
    ]


def test_fetch_stops_a_zone_on_an_empty_page(tmp_path):
    asked = []

    def handler(request):
        asked.append(str(request.url))
        full = {f"T{i}": {} for i in range(100)}
        return httpx.Response(200, json={"servers": full if request.url.params["page"] == "1" else {}})

    source = scaleway_products.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path)
    list(scaleway_products.fetch(fetcher))
    assert len(asked) == 2 * len(scaleway_products.ZONES)


def server(**changes) -> dict:
    body = json.loads((FIXTURES / FOLDER / "fr-par-2-page-1.json").read_text())
    return {**body["servers"]["L4-1-24G"], **changes}


def one(name: str = "L4-1-24G", **changes) -> bytes:
    return json.dumps({"servers": {name: server(**changes)}}).encode()


@pytest.mark.parametrize(
    ("name", "changes", "reason"),
    [
        ("L4-1-24G", {"hourly_price": 0}, "no_price: hourly_price 0"),
        ("L4-1-24G", {"hourly_price": None}, "no_price: hourly_price None"),
        ("L4-1-24G", {"gpu_info": None}, "gpu_info missing: the type names no GPU model"),
        ("L4-1-24G", {"mig_profile": "1g.10gb"}, "mig_profile '1g.10gb': GPU slices are not mapped"),
        ("H100-SXM-2-80G", {"gpu": 2, "gpu_info": {"gpu_manufacturer": "NVIDIA", "gpu_name": "H100-PCIe", "gpu_memory": 85899345920}},
         "form_factor_conflict: type H100-SXM-2-80G but gpu_info says H100-PCIe"),
    ],
    ids=["placeholder-zero", "missing-price", "no-gpu-info", "mig-slice", "sxm-name-pcie-gpu"],
)  # fmt: skip
def test_untrustworthy_types_are_rejected(name, changes, reason):
    [item] = parse_bytes("scaleway-products", one(name, **changes), PAR2)
    assert isinstance(item, Rejected) and item.reasons == (reason,)


@pytest.mark.parametrize(
    ("body", "url", "message"),
    [
        (one(hourly_price={"units": 0, "nanos": 787500000, "currency_code": "EUR"}), PAR2, "hourly_price is not a number"),
        (json.dumps({"server_types": {"L4-1-24G": server()}}).encode(), PAR2, "lacks servers"),
        (json.dumps({"servers": {"L4-1-24G": {k: v for k, v in server().items() if k != "hourly_price"}}}).encode(), PAR2, "lacks `gpu` or `hourly_price`"),
        (one(), "file:///tmp/page.json", "cannot tell the Scaleway zone"),
        (one()[:100], PAR2, "not JSON"),
    ],
    ids=["money-object", "renamed-servers", "missing-price-field", "no-zone-in-url", "truncated"],
)  # fmt: skip
def test_bad_bodies_fail_the_source(body, url, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("scaleway-products", body, url)


def test_euro_prices_without_a_loaded_rate_are_rejected_not_guessed():
    [item] = normalize_bytes("scaleway-products", one(), PAR2)
    assert isinstance(item, Rejected) and item.reasons == ("no_exchange_rate: EUR",)


def test_a_real_page_with_render_s_maps_its_p100():
    """fixtures/scaleway/scaleway-products/real/servers_page2.json: a real second page (getcomputable/gpu-index)."""
    body = (FIXTURES / "scaleway" / "scaleway-products" / "real" / "servers_page2.json").read_bytes()
    page2 = "https://api.scaleway.com/instance/v1/zones/fr-par-2/products/servers?per_page=100&page=2"
    found = parse_bytes("scaleway-products", body, page2)
    assert [(o["instance_type"], o["gpu_name"], o["gpu_count"], o["price"]) for o in found] == [("RENDER-S", "P100", 1.0, 1.221)]
    assert found[0]["gpu_model"] == "P100-PCIe-16GB"
