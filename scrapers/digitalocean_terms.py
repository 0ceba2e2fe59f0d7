"""DigitalOcean sizes, read for each GPU Droplet's included outbound transfer: plan-bound egress terms.

The same `GET /v2/sizes` walk as `digitalocean-sizes` (bearer token, `links.pages.next`). Each
size states `transfer`, the outbound data transfer its Droplets include each month, pooled across
the team; traffic beyond the pool is billed at the overage rate, which the API does not state (the
reviewed `egress_terms` row quotes it). So a row is the allowance of one GPU size: tier 1 from 0
to the allowance at no charge, `free_allowance_gb_month` the allowance, and `region` the size slug
the allowance belongs to (join it to offers on `instance_type`). These rows are not in
`terms_reference_regions`: the provider-wide schedule stays the reviewed one.

The trap is the unit: `transfer` is in "TB" that DigitalOcean counts as 1,000 GiB (its pricing page:
"Droplets include free outbound data transfer, starting at 500 GiB / mo" for the 0.5 TB plan), so
GB = transfer x 1000 x 1.073741824. CPU sizes are skipped; a size without a positive `transfer` is
rejected.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import ParseItem, Rejected, ScrapedEgressTier
from gpucat.scrapers import _json
from gpucat.scrapers.base import Source, each_record
from gpucat.scrapers.digitalocean_sizes import HOST, fetch

GIB_PER_TB = 1000  # DigitalOcean's "TB" of transfer is 1,000 GiB
GIB_GB = 1.073741824
PRICING_PAGE = "https://www.digitalocean.com/pricing"
# The unit, against the 0.5 TB `transfer` of the cheapest size (as transcribed verbatim from the page
# by api-evangelist/digital-ocean plans/digital-ocean-plans-pricing.yml, read 2026-09-20).
UNIT_QUOTE = "Droplets include free outbound data transfer, starting at 500 GiB / mo"


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    sizes = _json.page(body, "DigitalOcean response", "sizes")
    yield from each_record("scraped_egress_terms", sizes, lambda size: [_allowance(size, url)] if size.get("gpu_info") else [])


def _allowance(size: dict[str, Any], url: str) -> ParseItem:
    transfer = size["transfer"]
    if isinstance(transfer, bool) or not isinstance(transfer, int | float) or transfer <= 0:
        return Rejected("scraped_egress_terms", (f"no_allowance: transfer {transfer!r}",), {"slug": size["slug"], "transfer": transfer})
    gib = transfer * GIB_PER_TB
    gb = round(gib * GIB_GB, 6)
    quote = f"size {size['slug']}: transfer {transfer:g}"
    return ScrapedEgressTier(
        scope="internet",
        region=size["slug"],
        tier=1,
        from_gb=0.0,
        to_gb=gb,
        usd_per_gb=0.0,
        original_price=0.0,
        original_unit="GiB",
        free_allowance_gb_month=gb,
        evidence=(
            f'from_gb,to_gb,usd_per_gb,original_price,free_allowance_gb_month: "{quote}" <{url}>'
            f' || to_gb,free_allowance_gb_month: "{UNIT_QUOTE}" <{PRICING_PAGE}>'
        ),
        notes=f"included outbound transfer of one {size['slug']} Droplet, pooled per team: {transfer:g} TB = {gib:g} GiB; overage per the reviewed egress row",
    )


SOURCE = Source(
    name="digitalocean-terms",
    provider="digitalocean",
    description="DigitalOcean sizes: each GPU Droplet size's included outbound transfer (plan-bound egress terms)",
    tables=("scraped_egress_terms",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="DIGITALOCEAN_TOKEN",
    api_key_required=True,
    docs_url="https://docs.digitalocean.com/reference/api/api-reference/#operation/sizes_list",
)
