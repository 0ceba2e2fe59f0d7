"""Whole, valid records for tests to vary one field at a time, from a made-up provider.

Warehouse and pipeline tests need records, not any real provider: `EXAMPLE` is a source that
fetches and parses nothing, so these tests hold whatever sources are registered.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gpucat.schemas.records import Offer
from gpucat.scrapers.base import Source


def example_source(name: str = "example-offers") -> Source:
    return Source(
        name=name,
        provider="example",
        description="a made-up source for tests",
        tables=("offers",),
        hosts=frozenset({"prices.example.com"}),
        fetch=lambda fetcher: iter(()),
        parse=lambda body, *, url, fetched_at: iter(()),
    )

SCRAPED = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def offer(**changes: Any) -> Offer:
    base: dict[str, Any] = {
        "provider": "example",
        "offer_id": "gpu8.48xlarge/us-east-1/on_demand",
        "source": "example-offers",
        "instance_type": "gpu8.48xlarge",
        "region": "us-east-1",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "gpu8",
        "gpu_model": "H100-SXM",
        "gpu_count": 8.0,
        "gpu_memory_gb": 80.0,
        "vcpus": 192.0,
        "ram_gb": 2199.023,
        "price": 55.04,
        "price_unit": "instance_hour",
        "currency": "USD",
        "usd_per_hour": 55.04,
        "usd_per_gpu_hour": 6.88,
        "availability": "unknown",
        "available_count": None,
        "interconnect": "nvswitch",
        "fabric": "efa",
        "fabric_gbps": 3200.0,
        "source_url": "https://prices.example.com/v1/us-east-1/index.csv",
        "scraped_at": SCRAPED,
    }
    base.update(changes)
    return Offer(**base)


def offers(n: int, **changes: Any) -> list[Offer]:
    return [offer(offer_id=f"type{i}/us-east-1/on_demand", instance_type=f"type{i}", **changes) for i in range(n)]
