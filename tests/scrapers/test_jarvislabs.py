from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest

from gpucat.schemas.errors import MissingApiKey, ParseError
from gpucat.scrapers import jarvislabs
from tests.scrapers.helpers import (
    by_id,
    mock_fetcher,
    offers,
    parse_bytes,
    parse_fixture,
    rejected,
    rejection_reasons,
    skipped,
)


def items():
    return parse_fixture("jarvislabs", "jarvislabs/jarvislabs/server_meta.json")


def test_whole_record_h100_container_spot():
    record = by_id(items())["H100/india-noida-01/container/spot/2x"]
    assert record == {
        "table": "offers",
        "provider": "jarvislabs",
        "offer_id": "H100/india-noida-01/container/spot/2x",
        "source": "jarvislabs",
        "instance_type": "2x H100 container",
        "region": "india-noida-01",
        "market": "spot",
        "tier": "container",
        "gpu_name": "H100",
        "gpu_model": "H100-SXM",
        "gpu_count": 2.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 32.0,
        "ram_gb": 400.0,
        "price": 1.61,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 3.22,
        "usd_per_gpu_hour": 1.61,
        "availability": "available",
        "available_count": 3,
        "interconnect": "nvswitch",
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://backendn.jarvislabs.net/misc/server_meta",
        "scraped_at": datetime(2026, 11, 20, 6, 0, 13, tzinfo=UTC),
    }


def test_whole_record_h200_maps_to_sxm_by_the_cited_provider_default():
    # server_meta says only "H200" (SXM or NVL); Jarvislabs' pricing page sells "NVIDIA H200 SXM",
    # cited in gpu_form_defaults.csv. The row allows one GPU, so no interconnect is claimed.
    record = by_id(items())["H200/europe-01/container/on_demand/1x"]
    assert record == {
        "table": "offers",
        "provider": "jarvislabs",
        "offer_id": "H200/europe-01/container/on_demand/1x",
        "source": "jarvislabs",
        "instance_type": "1x H200 container",
        "region": "europe-01",
        "market": "on_demand",
        "tier": "container",
        "gpu_name": "H200",
        "gpu_model": "H200-SXM",
        "gpu_count": 1.0,
        "gpu_memory_gb": 141.0,
        "vcpus": 28.0,
        "ram_gb": 300.0,
        "price": 3.99,
        "price_unit": "gpu_hour",
        "currency": "USD",
        "fx_rate_date": None,
        "storage_usd_per_gb_month": None,
        "egress_usd_per_gb": None,
        "ingress_usd_per_gb": None,
        "price_excludes": None,
        "usd_per_hour": 3.99,
        "usd_per_gpu_hour": 3.99,
        "availability": "available",
        "available_count": 2,
        "interconnect": None,
        "fabric": None,
        "fabric_gbps": None,
        "source_url": "https://backendn.jarvislabs.net/misc/server_meta",
        "scraped_at": datetime(2026, 11, 20, 6, 0, 13, tzinfo=UTC),
    }
    # no spot price on the row: no spot offer
    assert [i for i in by_id(items()) if i.startswith("H200/")] == ["H200/europe-01/container/on_demand/1x"]


@pytest.mark.parametrize(
    ("gpu_type", "vram", "model"),
    [
        ("H100", "80", "H100-SXM"), ("H200", "141", "H200-SXM"), ("A6000", "48", "RTX-A6000"), ("A5000", "24", "RTX-A5000"),
        ("RTX A5000", "24", "RTX-A5000"),
        # the pricing page sells "NVIDIA A100 80GB"/"40GB" and "NVIDIA RTX Pro 6000 Blackwell" without a
        # form factor or edition: the stand-ins, which keep the memory and claim neither
        ("A100-80GB", "80", "A100-80GB-AnyForm"), ("A100", "40", "A100-40GB-AnyForm"), ("RTX-PRO6000", "96", "RTX-PRO-6000-AnyEdition"),
        ("RTX PRO 6000 Blackwell", "96", "RTX-PRO-6000-AnyEdition"),
    ],
    ids=["h100-default", "h200-default", "a6000-alias", "a5000-alias", "a5000", "a100-80-unstated", "a100-40-unstated", "rtxpro6000", "rtxpro6000-spelled"],
)
def test_gpu_types_map_by_rule(gpu_type, vram, model):
    [first, *_] = parse_bytes("jarvislabs", json.dumps({"server_meta": [row(gpu_type=gpu_type, vram=vram)]}).encode())
    assert first["gpu_model"] == model


def test_counts_markets_and_the_vm_rule():
    result = items()
    assert len(offers(result)) == 31
    # spot only for containers: the VM row of the same H100 has none
    assert not [i for i in by_id(result) if i.startswith("H100/india-noida-01/vm/spot")]
    assert sorted(i.rsplit("/", 1)[1] for i in by_id(result) if i.startswith("H100/india-noida-01/vm/on_demand")) == ["1x", "2x", "4x", "8x"]
    # a null workload row is a VM row of one GPU
    assert [i for i in by_id(result) if i.startswith("H100/europe-01")] == ["H100/europe-01/vm/on_demand/1x"]
    # 5 free H100s: 4 are available, 8 are not
    ids = by_id(result)
    assert (ids["H100/india-noida-01/vm/on_demand/4x"]["availability"], ids["H100/india-noida-01/vm/on_demand/8x"]["availability"]) == ("available", "unavailable")


def test_string_prices_and_empty_stock():
    record = by_id(items())["RTX A6000/india-01/container/on_demand/1x"]
    assert (record["gpu_model"], record["price"], record["availability"], record["available_count"]) == ("RTX-A6000", 0.79, "unavailable", 0)


def test_every_gpu_maps_and_cpu_machines_are_skipped():
    result = items()
    assert rejected(result) == []
    assert sorted({(o["gpu_name"], o["gpu_model"]) for o in offers(result)}) == [
        ("A100-80GB", "A100-80GB-AnyForm"), ("H100", "H100-SXM"), ("H200", "H200-SXM"), ("L4", "L4"), ("RTX A6000", "RTX-A6000"),
        ("RTX-PRO6000", "RTX-PRO-6000-AnyEdition"),
    ]
    assert skipped(result) == {"not_gpu: CPU-only machine (cpu_meta)": 2}


def row(**kw):
    base = {"gpu_type": "L4", "region": "india-noida-01", "num_free_devices": 1, "price_per_hour": 0.44, "spot_price": 0.29,
            "vram": "24", "cpus_per_gpu": 28, "ram_per_gpu": 124, "workload_type": "vm"}  # fmt: skip
    return {**base, **kw}


@pytest.mark.parametrize(
    ("bad", "reasons"),
    [
        (row(price_per_hour=None), ("no_price: None",)),
        (row(price_per_hour="bad"), ("no_price: 'bad'",)),
        (row(gpu_type="Z9"), ("unknown_gpu: 'Z9'",)),
        (row(gpu_type="A100", vram=None), ("ambiguous_gpu: 'A100' could be A100-PCIe-40GB, A100-PCIe-80GB, A100-SXM4-40GB, A100-SXM4-80GB",)),
        (row(gpu_type="H200", vram="80"), ("memory_mismatch: 'H200' with 80 GB fits none of H200-NVL, H200-SXM",)),
    ],
    ids=["null-price", "text-price", "unknown", "a100-memory-unstated", "memory-contradicts"],
)
def test_bad_rows_are_rejected(bad, reasons):
    [result] = parse_bytes("jarvislabs", json.dumps({"server_meta": [bad]}).encode())
    assert result.reasons == reasons


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"detail": "Not authenticated"}', "lacks server_meta"),
        (b'{"server_meta": [', "not JSON"),
    ],
    ids=["error-object", "truncated"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("jarvislabs", body)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"server_meta": [{"gpu_type": "L4"}]}', "malformed_record: missing field 'region'"),
    ],
    ids=["missing-field"],
)  # fmt: skip
def test_a_malformed_record_is_rejected_with_its_reason(body, reason):
    """One record of the wrong shape is one counted rejection naming what is wrong; the page still loads."""
    assert rejection_reasons("jarvislabs", body) == [(reason,)]


def test_fetch_sends_the_key_as_a_bearer_header_only(tmp_path):
    sent = []

    def handler(request):
        sent.append(request)
        return httpx.Response(200, json={"server_meta": []})

    source = jarvislabs.SOURCE
    fetcher = mock_fetcher(source, handler, tmp_path, env={"JL_API_KEY": "jl-secret"})
    [page] = jarvislabs.fetch(fetcher)
    [request] = sent
    assert request.headers["Authorization"] == "Bearer jl-secret" and "jl-secret" not in page.url


def test_a_keyless_run_is_skipped_naming_the_variable(tmp_path):
    source = jarvislabs.SOURCE
    with pytest.raises(MissingApiKey, match="JL_API_KEY"):
        mock_fetcher(source, lambda r: httpx.Response(200), tmp_path)
