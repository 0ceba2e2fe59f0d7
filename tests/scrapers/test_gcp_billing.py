from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from gpucat.schemas.errors import FetchError, MissingApiKey, ParseError
from gpucat.schemas.records import Rejected, Skipped
from gpucat.scrapers import gcp_billing
from gpucat.scrapers.capture import CaptureWriter
from gpucat.scrapers.http import Fetcher, make_client
from tests.conftest import FIXTURES
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
)

PAGE_1 = "gcp/gcp-billing/skus-page-1.json"
PAGE_2 = "gcp/gcp-billing/skus-page-2.json"
URL_1 = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus?currencyCode=USD&pageSize=5000&key=REDACTED"


def items():
    return parse_fixture("gcp-billing", PAGE_1, PAGE_2)


def test_whole_record_h100_spot_attach_price():
    assert by_id(items())["F1D8-22A7-6B0C/us-east5"] == {
        "table": "offers",
        "provider": "gcp",
        "offer_id": "F1D8-22A7-6B0C/us-east5",
        "source": "gcp-billing",
        "instance_type": "nvidia-h100-80gb",
        "region": "us-east5",
        "market": "spot",
        "tier": "gpu_attach",
        "gpu_name": "Nvidia H100 80GB",
        "gpu_model": "H100-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 80.0,
        "vcpus": None,
        "ram_gb": None,
        "price": 2.253,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 2.253,
        "usd_per_gpu_hour": 2.253,
        "availability": "unknown",
        "available_count": None,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": URL_1,
        "scraped_at": datetime(2026, 11, 30, 6, 0, 1, tzinfo=UTC),
    }


def test_one_offer_per_region_and_market_and_the_units_nanos_price():
    ids = by_id(items())
    t4 = sorted((o["region"], o["market"], o["price"]) for o in ids.values() if o["gpu_model"] == "T4")
    regions = ["us-central1", "us-east1", "us-east4", "us-west1", "us-west4"]
    assert t4 == sorted([(r, "on_demand", 0.35) for r in regions] + [(r, "spot", 0.14) for r in regions])
    assert ids["6C1B-4F9D-2E10/us-east1"]["price"] == 2.933908  # units "2" + nanos 933908000
    assert ids["9E6F-7C24-0D51/asia-northeast1"]["instance_type"] == "nvidia-h100-mega-80gb"


def test_g4_and_a4_descriptions():
    ids = by_id(items())
    # "RTX 6000 96GB" has no "GPU" token; it is the RTX PRO 6000 Blackwell of G4.
    assert (ids["C4A1-8E57-2F06/europe-west1"]["gpu_model"], ids["E83B-6D02-95A4/europe-west1"]["market"]) == ("RTX-PRO-6000-Server", "spot")
    # The A4 slice is a per-GPU share of the whole machine, not an attach price.
    b200 = ids["8B52-4E0A-D7C1/us-central1"]
    assert (b200["gpu_model"], b200["market"], b200["tier"], b200["price"]) == ("B200", "spot", "gpu_slice", 4.9542)


def test_tpus_are_priced_per_chip_and_spot_tpus_say_so_in_their_description():
    tpus = {(o["gpu_model"], o["region"], o["market"]): (o["price"], o["tier"], o["instance_type"]) for o in offers(items()) if o["gpu_model"].startswith("TPU")}
    assert tpus == {
        ("TPU-v5e", "us-central1", "on_demand"): (1.2, "tpu_chip", "tpu-v5e"),
        ("TPU-v5e", "us-west4", "on_demand"): (1.2, "tpu_chip", "tpu-v5e"),
        # usageType stays OnDemand on the Preemptible TPU SKU.
        ("TPU-v5e", "us-central1", "spot"): (0.48, "tpu_chip", "tpu-v5e"),
        ("TPU-v5e", "us-west4", "spot"): (0.48, "tpu_chip", "tpu-v5e"),
        ("TPU-v6e", "us-east5", "on_demand"): (2.7, "tpu_chip", "tpu-v6e"),
        ("TPU-v5p", "us-east5", "on_demand"): (4.2, "tpu_chip", "tpu-v5p"),
    }


def test_commitments_dws_sole_tenancy_and_non_gpu_skus_are_left_out():
    result = items()
    kept = {o["offer_id"].split("/")[0] for o in offers(result)} | {r.row["skuId"] for r in rejected(result)}
    for sku in ("0C5C-F6B4-8A7E", "3B7A-E0C5-19F4", "47E2-0A9D-B3C8", "D0C9-13F6-72AB", "0E4F-C8B3-6A15"):
        assert sku not in kept


def test_rejections_name_their_reason():
    assert sorted((r.row["skuId"], r.reasons) for r in rejected(items())) == [
        ("1F6D-A3B9-0E27", ("not_rentable_on_demand: a4-highgpu is sold only as Spot, reservations or DWS",)),
        ("6D13-08FA-C259", ("no_region: serviceRegions is empty",)),
        ("7F20-B6E1-4C93", ("not_rentable_on_demand: a3-ultragpu is sold only as Spot, reservations or DWS",)),
        ("B2E7-91C0-4D68", ("no_price: 0.0 USD per GPU-hour is a placeholder",)),
    ]


def _sku(**changes) -> dict:
    sku = json.loads((FIXTURES / PAGE_1).read_text())["skus"][1]
    for path, value in changes.items():
        target = sku
        *parents, leaf = path.split(".")
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[leaf] = value
    return sku


@pytest.mark.parametrize(
    ("sku", "reason"),
    [
        (_sku(**{"pricingInfo.0.pricingExpression.usageUnit": "mo"}), "unexpected_unit: 'mo'"),
        (_sku(**{"pricingInfo.0.pricingExpression.tieredRates.0.unitPrice.currencyCode": "EUR"}), "unexpected_currency: 'EUR'"),
        (_sku(description="Spot Preemptible Nvidia Tesla T4 GPU running in Americas"), "inconsistent_market"),
    ],
    ids=["monthly-unit", "other-currency", "spot-description-on-demand-usage"],
)
def test_untrustworthy_skus_are_rejected(sku, reason):
    [item] = parse_bytes("gcp-billing", json.dumps({"skus": [sku]}).encode())
    assert reason in item.reasons[0]


@pytest.mark.parametrize(
    ("tiers", "price"),
    [
        ([{"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": "3"}}], 3.0),
        ([{"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "nanos": 350000000}}], 0.35),
        (
            [
                {"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD"}},
                {"startUsageAmount": 744, "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 350000000}},
            ],
            0.35,
        ),
    ],
    ids=["nanos-left-out", "units-left-out", "free-allowance-then-paid"],
)
def test_money_is_units_plus_nanos_with_proto3_zeros_left_out(tiers, price):
    sku = _sku(**{"pricingInfo.0.pricingExpression.tieredRates": tiers, "serviceRegions": ["us-central1"]})
    [offer] = parse_bytes("gcp-billing", json.dumps({"skus": [sku]}).encode())
    assert offer["price"] == price


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": {"code": 400, "message": "API key not valid."}}', "Billing Catalog error"),
        (b'{"sku": []}', "lacks skus"),
        (b'{"skus": [', "not JSON"),
    ],
    ids=["api-error", "renamed-field", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("gcp-billing", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (json.dumps({"skus": [{k: v for k, v in _sku().items() if k != "pricingInfo"}]}).encode(), "malformed_record: missing field 'pricingInfo'"),
    ],
    ids=["missing-field"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("gcp-billing", body) == [(reason,)]


def test_keyless_live_fetch_is_skipped_with_the_variable_named(tmp_path):
    source = gcp_billing.SOURCE
    with pytest.raises(MissingApiKey) as info:
        mock_fetcher(source, lambda r: httpx.Response(500), tmp_path)
    assert info.value.env_var == "GCP_API_KEY"


def test_fetch_follows_page_tokens_and_keeps_the_key_out_of_page_urls(tmp_path):
    sent = []
    pages = [{"skus": [], "nextPageToken": "tok-2"}, {"skus": [], "nextPageToken": "tok-3"}, {"skus": [], "nextPageToken": ""}]

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json=pages[len(sent) - 1])

    source = gcp_billing.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"GCP_API_KEY": "AIza-secret"})
    got = list(gcp_billing.fetch(fetcher))
    assert [parse_qs(urlsplit(str(r.url)).query).get("pageToken") for r in sent] == [None, ["tok-2"], ["tok-3"]]
    assert all(r.url.params["key"] == "AIza-secret" and r.url.params["pageSize"] == "5000" for r in sent)
    assert [p.url.count("key=REDACTED") for p in got] == [1, 1, 1]
    assert not any("AIza-secret" in p.url for p in got)


def test_a_repeated_page_token_fails_instead_of_looping(tmp_path):
    source = gcp_billing.SOURCE
    handler = lambda request: httpx.Response(200, json={"skus": [], "nextPageToken": "same"})  # noqa: E731
    fetcher = mock_fetcher(source, handler, tmp_path, env={"GCP_API_KEY": "k"})
    with pytest.raises(FetchError, match="linked back to a page already read"):
        list(gcp_billing.fetch(fetcher))


def test_the_key_never_reaches_captures_or_logs(tmp_path, caplog):
    caplog.set_level("INFO", logger="httpx")
    source = gcp_billing.SOURCE
    handler = lambda request: httpx.Response(200, json={"skus": [], "nextPageToken": ""})  # noqa: E731
    fetcher = Fetcher(
        source,
        make_client(source, httpx.MockTransport(handler)),
        workdir=tmp_path,
        env={"GCP_API_KEY": "AIza-capture-secret"},
        capture=CaptureWriter(tmp_path / "cap"),
    )
    list(gcp_billing.fetch(fetcher))
    captured = "".join(p.read_text() for p in (tmp_path / "cap").rglob("*") if p.is_file())
    assert "key=REDACTED" in captured
    assert "AIza-capture-secret" not in captured + caplog.text


def described(description: str, usage: str) -> list:
    return parse_bytes("gcp-billing", json.dumps({"skus": [_sku(description=description, **{"category.usageType": usage})]}).encode())


@pytest.mark.parametrize(
    ("description", "model", "accelerator"),
    [
        ("Nvidia Tesla P4 GPU running in Montreal", "P4", "nvidia-tesla-p4"),
        ("Nvidia Tesla P100 GPU running in Americas", "P100-PCIe-16GB", "nvidia-tesla-p100"),
        ("Spot Preemptible Nvidia Tesla P100 GPU running in Belgium", "P100-PCIe-16GB", "nvidia-tesla-p100"),
        # Several V100 rows exist: GCP's documented platform (16 GB, NVLink ring) picks the SXM2 card.
        ("Nvidia Tesla V100 GPU running in Americas", "V100-SXM2-16GB", "nvidia-tesla-v100"),
        ("Nvidia Tesla V100 GPU attached to Spot Preemptible VMs running in Netherlands", "V100-SXM2-16GB", "nvidia-tesla-v100"),
        ("Tesla V100 GPU running in Americas", "V100-SXM2-16GB", "nvidia-tesla-v100"),
        ("Nvidia Tesla K80 GPU running in Americas", "K80", "nvidia-tesla-k80"),
    ],
)
def test_descriptions_outside_the_table_are_read_by_the_vendor_grammar(description, model, accelerator):
    usage = "Preemptible" if "Preemptible" in description else "OnDemand"
    result = described(description, usage)
    assert result and {(o["gpu_model"], o["instance_type"], o["tier"]) for o in result} == {(model, accelerator, "gpu_attach")}


@pytest.mark.parametrize(
    ("description", "model", "accelerator"),
    [
        # the reviewed table's cards, spelled with a vendor word more or less than the table's key
        ("Nvidia A100 80GB GPU running in Americas", "A100-SXM4-80GB", "nvidia-a100-80gb"),
        ("H100 80GB GPU running in Americas", "H100-SXM", "nvidia-h100-80gb"),
        ("Nvidia A100 GPU running in Americas", "A100-SXM4-40GB", "nvidia-tesla-a100"),
        ("NVIDIA H100 80GB Mega GPU running in Americas", "H100-SXM", "nvidia-h100-mega-80gb"),
        ("Nvidia Tesla L4 GPU running in Americas", "L4", "nvidia-l4"),
    ],
)
def test_a_table_card_spelled_otherwise_keeps_gcps_own_reading(description, model, accelerator):
    result = described(description, "OnDemand")
    assert result and {(o["gpu_model"], o["instance_type"]) for o in result} == {(model, accelerator)}


@pytest.mark.parametrize(
    ("description", "reason"),
    [
        ("Nvidia Tesla X9 GPU running in Americas", "unknown_gpu: 'Nvidia Tesla X9' in 'Nvidia Tesla X9'"),
        # 80 GB (SXM, PCIe) or 94 GB (NVL): the memory is unsaid, so not even a stand-in fits
        ("Nvidia H100 GPU running in Americas", "ambiguous_gpu: 'Nvidia H100' could be H100-NVL, H100-PCIe, H100-SXM in 'Nvidia H100'"),
    ],
)
def test_a_description_the_rules_cannot_settle_is_rejected_with_why(description, reason):
    [item] = described(description, "OnDemand")
    assert isinstance(item, Rejected) and item.reasons == (reason,)


def test_virtual_workstation_skus_are_skipped_not_rejected():
    [item] = described("Nvidia Tesla T4 Virtual Workstation GPU running in Americas", "OnDemand")
    assert isinstance(item, Skipped) and item.reason.startswith("not_rental")
