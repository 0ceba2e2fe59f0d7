"""Whole, valid records for tests to vary one field at a time."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from schemas.records import Offer

SCRAPED = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def offer(**changes: Any) -> Offer:
    base: dict[str, Any] = {
        "provider": "aws",
        "offer_id": "p5.48xlarge/us-east-1/on_demand",
        "source": "aws-pricelist",
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "market": "on_demand",
        "tier": None,
        "gpu_name": "p5",
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
        "source_url": "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
        "scraped_at": SCRAPED,
    }
    base.update(changes)
    return Offer(**base)


def offers(n: int, **changes: Any) -> list[Offer]:
    return [offer(offer_id=f"type{i}/us-east-1/on_demand", instance_type=f"type{i}", **changes) for i in range(n)]
