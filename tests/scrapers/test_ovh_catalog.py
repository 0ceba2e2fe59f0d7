from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected
from tests.conftest import FIXTURES
from tests.drift_checks import fixture_rates
from tests.scrapers.helpers import (
    by_id,
    normalize_bytes,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
)

FILE = "ovh/ovh-catalog/catalog-fr.json"
URL = "https://eu.api.ovh.com/1.0/order/catalog/public/cloud?ovhSubsidiary=FR"


def items():
    return parse_fixture("ovh-catalog", FILE)


def test_whole_record_l40s_hourly_in_gra11():
    assert by_id(items())["l40s-90.consumption/GRA11"] == {
        "table": "offers",
        "provider": "ovh",
        "offer_id": "l40s-90.consumption/GRA11",
        "source": "ovh-catalog",
        "instance_type": "l40s-90",
        "region": "GRA11",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "L40S",
        "gpu_model": "L40S",
        "gpu_count": 1.0,
        "gpu_memory_gb": 48.0,
        "vcpus": 15.0,
        "ram_gb": 96.637,  # 90 GiB
        "price": 1.4,  # 140000000 in 1e-8 EUR
        "price_unit": "instance_hour",
        "currency": "EUR",
        "usd_per_hour": round(1.4 * 1.0705, 6),
        "usd_per_gpu_hour": round(1.4 * 1.0705, 6),
        "fx_rate_date": date(2024, 6, 28),
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2024, 7, 1, 6, 0, 20, tzinfo=UTC),
    }


def test_hourly_addons_take_the_regions_their_monthly_twin_lists():
    ids = by_id(items())
    assert sorted(i for i in ids if i.startswith("l4-90.")) == ["l4-90.consumption/BHS5", "l4-90.consumption/GRA11", "l4-90.consumption/GRA9"]
    four = ids["l4-360.consumption/GRA9"]
    assert (four["gpu_count"], four["price"], four["usd_per_gpu_hour"]) == (4.0, 3.0, round(3.0 * 1.0705 / 4, 6))


def test_only_hourly_linux_gpu_instances_become_offers():
    result = items()
    codes = {o["offer_id"].split("/")[0] for o in offers(result)}
    assert codes == {
        f"{f}.consumption"
        for f in ("l4-90", "l4-180", "l4-360", "l40s-90", "l40s-180", "a10-45", "a10-90", "t2-45", "rtx5000-28", "a100-180", "h100-380", "h100-1520", "h200-1920", "t1-45")
    }
    assert len(offers(result)) == 25


def test_whole_record_v100s_maps_by_rule_to_its_only_board():
    # "Tesla V100S" names no form factor, but NVIDIA made the V100S as one board (PCIe, 32 GB).
    # t2-45 has no region in the fixture (no monthly twin lists one): one global offer.
    assert by_id(items())["t2-45.consumption/global"] == {
        "table": "offers",
        "provider": "ovh",
        "offer_id": "t2-45.consumption/global",
        "source": "ovh-catalog",
        "instance_type": "t2-45",
        "region": "global",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "Tesla V100S",
        "gpu_model": "V100S-PCIe-32GB",
        "gpu_count": 1.0,
        "gpu_memory_gb": 32.0,
        "vcpus": 15.0,
        "ram_gb": 48.318,  # 45 GiB
        "price": 1.97,
        "price_unit": "instance_hour",
        "currency": "EUR",
        "usd_per_hour": round(1.97 * 1.0705, 6),
        "usd_per_gpu_hour": round(1.97 * 1.0705, 6),
        "fx_rate_date": date(2024, 6, 28),
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL,
        "scraped_at": datetime(2024, 7, 1, 6, 0, 20, tzinfo=UTC),
    }


def test_gpus_without_a_stated_form_factor_keep_their_memory_and_claim_no_form_factor():
    """OVH states the memory (`gpu.memory.size`) but neither SXM nor PCIe: each maps to its family's
    stand-in for that memory, whose form factor is "Unstated"; none is rejected, none guessed."""
    got = sorted({(o["offer_id"].split("/")[0], o["gpu_name"], o["gpu_model"], o["gpu_count"], o["gpu_memory_gb"]) for o in offers(items()) if "Any" in o["gpu_model"]})
    assert got == [
        ("a100-180.consumption", "A100", "A100-80GB-AnyForm", 1.0, 80.0),
        ("h100-1520.consumption", "H100", "H100-80GB-AnyForm", 4.0, 80.0),
        ("h100-380.consumption", "H100", "H100-80GB-AnyForm", 1.0, 80.0),
        ("h200-1920.consumption", "H200", "H200-141GB-AnyForm", 8.0, 141.0),
        # the FHHL board is an edition OVH would have to name; SXM2 or PCIe it does not say
        ("t1-45.consumption", "Tesla V100", "V100-16GB-AnyForm", 1.0, 16.0),
    ]
    assert rejected(items()) == []


def catalog() -> dict:
    return json.loads((FIXTURES / FILE).read_text())


def with_l4_pricing(**changes) -> bytes:
    body = catalog()
    addon = next(a for a in body["addons"] if a["planCode"] == "l4-90.consumption")
    addon["pricings"][0].update(changes)
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"price": 0}, "no_price: 0 per 1 hour(s)"),
        ({"price": 4500000000, "interval": 6}, "no_price: 4500000000 per 6 hour(s)"),
    ],
    ids=["placeholder-zero", "not-per-hour"],
)
def test_untrustworthy_prices_are_rejected(changes, reason):
    result = parse_bytes("ovh-catalog", with_l4_pricing(**changes), URL)
    assert [r.reasons for r in result if isinstance(r, Rejected) and r.row["planCode"] == "l4-90.consumption"] == [(reason,)]
    assert not [o for o in result if not isinstance(o, Rejected) and o["instance_type"] == "l4-90"]


def renamed(key: str, new: str) -> bytes:
    body = catalog()
    body[new] = body.pop(key)
    return json.dumps(body).encode()


def without_project_plan() -> bytes:
    body = catalog()
    body["plans"] = [p for p in body["plans"] if p["planCode"] != "project"]
    return json.dumps(body).encode()


def without_technical() -> bytes:
    body = catalog()
    next(a for a in body["addons"] if a["planCode"] == "l4-90.consumption")["blobs"].pop("technical")
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (with_l4_pricing(price=0.75), "price is not an integer count of 1e-8 EUR"),
        (with_l4_pricing(price="75000000"), "price is not an integer count"),
        (renamed("addons", "addOns"), "lacks `addons` or `plans`"),
        (renamed("locale", "localisation"), "names no currency"),
        (without_project_plan(), "no `project` plan"),
        (without_technical(), "lacks blobs.technical"),
        (b'{"addons": [', "not JSON"),
    ],
    ids=["price-in-euros", "price-as-string", "renamed-addons", "renamed-locale", "no-project-plan", "no-technical-blob", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("ovh-catalog", body, URL)


def test_the_catalogs_own_currency_is_kept_and_converted():
    body = catalog()
    body["locale"]["currencyCode"] = "GBP"  # e.g. ovhSubsidiary=GB
    # Seen on the fixture's capture day, three days after the fixtures' ECB rates.
    seen = datetime(2024, 7, 1, 6, 0, tzinfo=UTC)
    result = normalize_bytes("ovh-catalog", json.dumps(body).encode(), URL, rates=fixture_rates(FIXTURES), fetched_at=seen)
    l4 = next(o for o in result if not isinstance(o, Rejected) and o["offer_id"] == "l4-90.consumption/GRA11")
    assert (l4["price"], l4["currency"], l4["usd_per_hour"], l4["fx_rate_date"]) == (0.75, "GBP", round(0.75 * 1.0705 / 0.84638, 6), date(2024, 6, 28))


def test_without_rates_euro_offers_are_rejected():
    result = normalize_bytes("ovh-catalog", (FIXTURES / FILE).read_bytes(), URL)
    assert {r.reasons[0] for r in result if isinstance(r, Rejected) and not r.reasons[0].startswith(("unknown_gpu", "ambiguous_gpu"))} == {"no_exchange_rate: EUR"}
    assert not [o for o in result if not isinstance(o, Rejected)]



def test_a_flavour_no_addon_gives_regions_for_is_one_global_offer():
    body = catalog()
    for addon in body["addons"]:
        if addon["invoiceName"] == "a10-45":
            addon["configurations"] = []
    result = parse_bytes("ovh-catalog", json.dumps(body).encode(), URL)
    assert [o["offer_id"] for o in result if not isinstance(o, Rejected) and o["instance_type"] == "a10-45"] == ["a10-45.consumption/global"]
