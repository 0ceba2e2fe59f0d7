"""Vultr plans, read for each GPU plan's monthly bandwidth quota: plan-bound egress terms.

The same keyless `GET /v2/plans?type=all` and `GET /v2/plans-metal` answers as `vultr-plans`. Each
plan states `bandwidth`, its monthly transfer quota in GB (Vultr's API reference); traffic beyond
it is billed at the overage rate, which the API does not state. So a row is the quota of one GPU
plan: tier 1 from 0 to the quota at no charge, `free_allowance_gb_month` the quota, and `region`
the plan id it belongs to (join it to offers on `instance_type`). These rows are not in
`terms_reference_regions`: the provider-wide schedule (the account's free 2 TB) stays reviewed.

GPU plans are the cloud GPU plans (`gpu_type` set) and the bare-metal plans whose id names a GPU
(`vbm-...-gpu`); CPU plans are skipped. A quota that is not a positive number is rejected.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import ParseItem, Rejected, ScrapedEgressTier
from gpucat.scrapers import _json
from gpucat.scrapers.base import Source, each_record
from gpucat.scrapers.vultr_plans import HOST, fetch


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.document(body, "Vultr response")
    plans = next((payload[k] for k in ("plans", "plans_metal") if isinstance(payload, dict) and k in payload), None)
    if not isinstance(plans, list):
        raise ParseError("Vultr response lacks a plans or plans_metal list")
    yield from each_record("scraped_egress_terms", plans, lambda plan: [_quota(plan, url)] if plan.get("gpu_type") or str(plan["id"]).endswith("-gpu") else [])


def _quota(plan: dict[str, Any], url: str) -> ParseItem:
    quota = plan["bandwidth"]
    if isinstance(quota, bool) or not isinstance(quota, int | float) or quota <= 0:
        return Rejected("scraped_egress_terms", (f"no_allowance: bandwidth {quota!r}",), {"id": plan["id"], "bandwidth": quota})
    return ScrapedEgressTier(
        scope="internet",
        region=plan["id"],
        tier=1,
        from_gb=0.0,
        to_gb=float(quota),
        usd_per_gb=0.0,
        original_price=0.0,
        original_unit="GB",
        free_allowance_gb_month=float(quota),
        evidence=f'from_gb,to_gb,usd_per_gb,original_price,free_allowance_gb_month: "plan {plan["id"]}: bandwidth {quota}" <{url}>',
        notes="the plan's monthly bandwidth quota in GB; overage is not in the API",
    )


SOURCE = Source(
    name="vultr-terms",
    provider="vultr",
    description="Vultr plans: each GPU plan's monthly bandwidth quota (plan-bound egress terms)",
    tables=("scraped_egress_terms",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://www.vultr.com/api/#tag/plans",
)
