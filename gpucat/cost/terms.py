"""The provider terms and hardware figures a job cost reads from the catalog.

Billing increments, storage that survives a stop, internet egress tiers, published spot
interruption bands, the GPUs' TFLOPS and bandwidths, and node fabrics, each from a named query
in warehouse/sql/cost_*.sql. A term a provider does not publish stays absent (never guessed);
the job cost then leaves that part out and names it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import duckdb

from gpucat.cost.jobcost import BillingTerms, EgressTerms, EgressTier, SpotRisk, StorageTerms, interruptions_per_hour_from_band
from gpucat.cost.throughput import Hardware
from gpucat.schemas.errors import UserInputError
from gpucat.warehouse.db import query_sql


@cache
def spot_defaults() -> dict[str, Any]:
    return json.loads(resources.files("gpucat.cost").joinpath("data/spot_defaults.json").read_text())


def default_spot_risk(provider: str) -> SpotRisk:
    entry = spot_defaults()["providers"].get(provider, spot_defaults()["default"])
    rate = float(entry["interruptions_per_hour"])
    return SpotRisk(rate, f"{provider}: {entry['basis']}", f"assumed {rate:g}/h")


def _rows(con: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
    try:
        cursor = con.execute(query_sql(name))
    except duckdb.CatalogException as exc:
        raise UserInputError(
            f"the catalog has no provider terms ({str(exc).splitlines()[0]}); run `gpucat refresh` to load them"
        ) from None
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, values, strict=True)) for values in cursor.fetchall()]


@dataclass(frozen=True)
class Terms:
    billing: dict[str, BillingTerms | None]  # every provider with a terms row; None: increment not published
    storage: dict[str, list[StorageTerms]]
    egress: dict[str, list[dict[str, Any]]]
    fabric_gbps_per_node: dict[str, float]
    interruptions: dict[tuple[str, str, str], dict[str, Any]]
    gpus: dict[str, dict[str, Any]]
    fabric_gbps: dict[tuple[str, str], float]

    def has_terms(self, provider: str) -> bool:
        """Whether the provider publishes any of the terms a job cost needs."""
        return bool(self.billing.get(provider) or self.storage.get(provider) or self.egress.get(provider))


def load_terms(con: duckdb.DuckDBPyConnection) -> Terms:
    egress: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in _rows(con, "cost_egress"):
        egress[row["provider"]].append(row)
    storage: dict[str, list[StorageTerms]] = defaultdict(list)
    for row in _rows(con, "cost_storage"):
        storage[row["provider"]].append(
            StorageTerms(f"{row['kind']}: {row['product']}", float(row["usd_per_gb_month"]), float(row["usd_per_gb_month_kept"]))
        )
    billing: dict[str, BillingTerms | None] = {}
    fabric: dict[str, float] = {}
    for row in _rows(con, "cost_billing"):
        increment = row["billing_increment_s"]
        billing[row["provider"]] = None if increment is None else BillingTerms(float(increment), float(row["min_charge_s"] or 0))
        if row.get("fabric_gbps_per_node"):
            fabric[row["provider"]] = float(row["fabric_gbps_per_node"])
    return Terms(
        billing=billing,
        storage=dict(storage),
        egress=dict(egress),
        fabric_gbps_per_node=fabric,
        interruptions={(r["provider"], r["region"], r["instance_type"]): r for r in _rows(con, "cost_interruptions")},
        gpus={r["gpu_model"]: r for r in _rows(con, "cost_gpus")},
        fabric_gbps={(r["provider"], r["offer_id"]): float(r["fabric_gbps"]) for r in _rows(con, "cost_fabric")},
    )


def offer_storage(row: dict[str, Any]) -> list[StorageTerms]:
    """A marketplace host's own disk price, when the offer carries one (it bills stopped or not)."""
    price = row.get("storage_usd_per_gb_month")
    return [] if price is None else [StorageTerms("the host's disk (per offer)", float(price), float(price))]


def offer_egress(row: dict[str, Any]) -> EgressTerms | None:
    """A marketplace host's own download price, when the offer carries one: one flat tier."""
    price = row.get("egress_usd_per_gb")
    return None if price is None else EgressTerms(tiers=(EgressTier(0.0, None, float(price)),))


def hardware_for_row(row: dict[str, Any], gpu: dict[str, Any], precision: str, fabric_gbps: float | None) -> Hardware | None:
    peak = gpu["fp16_tflops"] if precision == "fp16-mixed" else gpu["bf16_tflops"] or gpu["fp16_tflops"]
    if not peak or precision == "fp32":
        return None
    return Hardware(
        gpu_model=row["gpu_model"],
        family=gpu["family"],
        architecture=gpu["architecture"],
        peak_tflops=float(peak),
        memory_bandwidth_gbps=gpu["memory_bandwidth_gbps"],
        nvlink_gbps=gpu["nvlink_gbps"],
        gpus=max(1, int(row["gpus_total"])),
        nodes=int(row["nodes"]),
        interconnect=row["interconnect"],
        fabric=row["fabric"],
        fabric_gbps=fabric_gbps,
    )


def spot_risk(row: dict[str, Any], terms: Terms) -> SpotRisk:
    band = terms.interruptions.get((row["provider"], row["region"], row["instance_type"]))
    if band is None:
        return default_spot_risk(row["provider"])
    rate = interruptions_per_hour_from_band(band["band_lower_pct"], band["band_upper_pct"])
    return SpotRisk(
        rate,
        f"AWS Spot Advisor band {band['interruption_band']} of instances interrupted a month",
        f"AWS {band['interruption_band']}/month",
    )
