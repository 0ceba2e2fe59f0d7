"""Lambda's public instances page: the keyless source of Lambda's on-demand prices.

Lambda's API (`lambda-instance-types`) needs LAMBDA_API_KEY, and a key needs a payment method
on file (shared/reference/providers.md, Lambda). This page needs nothing: it is the API's
fallback (`fallback_for`), fetched only when the API's last run was skipped (no key) or failed,
and whichever of the two loads retires the other's current offers, so Lambda's offers never
carry two prices from two sources. Its offer_ids start with "page/".

The page (lambda.ai/instances, server-rendered) has one tab per instance size ("8x", "4x", "2x",
"1x"), each tab button labelling a tabpanel (aria-labelledby) that holds a <table> with the
header row "Plan | VRAM/GPU | vCPUs | RAM | STORAGE | PRICE/GPU/HR*". The price is per GPU-hour,
so an 8x instance costs 8 times the figure; the GPU count comes from the tab's label. vCPUs and
RAM are for the whole instance. The asterisk's footnote says prices exclude sales tax.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO

from bs4 import Tag

from schemas.errors import ParseError
from schemas.records import Offer, Page, ParseItem, Rejected
from schemas.units import gb_from_gib
from scrapers import _html
from scrapers.base import Fetcher, Source

HOST = "lambda.ai"
URL = f"https://{HOST}/instances"
PLAN, VRAM, VCPUS, RAM, PRICE = "Plan", "VRAM/GPU", "vCPUs", "RAM", "PRICE/GPU/HR*"
_SIZE = re.compile(r"^(\d+)\s*x$", re.IGNORECASE)
_GB = re.compile(r"^(\d+(?:\.\d+)?)\s*GB$")
_GIB = re.compile(r"^(\d+(?:\.\d+)?)\s*GiB$")

# (plan, VRAM per GPU in GB) -> canonical gpu_model. The plan name carries the form factor
# (SXM, PCIe); a plan that does not is rejected as ambiguous below, not guessed.
GPU_PLANS: dict[tuple[str, float], str] = {
    ("NVIDIA B200 SXM6", 180.0): "B200",
    ("NVIDIA H100 SXM", 80.0): "H100-SXM",
    ("NVIDIA H100 PCIe", 80.0): "H100-PCIe",
    ("NVIDIA A100 SXM", 80.0): "A100-SXM4-80GB",
    ("NVIDIA A100 SXM", 40.0): "A100-SXM4-40GB",
    ("NVIDIA GH200", 96.0): "GH200",
    ("NVIDIA A6000", 48.0): "RTX-A6000",
    ("NVIDIA A10", 24.0): "A10",
}
# Plans whose GPU comes in more than one canonical form factor, with none named.
AMBIGUOUS_PLANS: dict[str, str] = {"NVIDIA Tesla V100": "V100-SXM2-16GB or V100-PCIe-16GB"}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    doc = _html.page(body, "Lambda instances page")
    panels = _html.require(doc.find_all(attrs={"role": "tabpanel"}), "Lambda instances page: instance-size tabs (role=tabpanel)")
    for panel in panels:
        count = _panel_size(doc, panel)
        what = f"Lambda instances page, {count}x tab"
        headers, rows = _html.table_by_headers(panel, [PLAN, VRAM, PRICE], what)
        columns = {label: _html.column(headers, label, what) for label in (PLAN, VRAM, VCPUS, RAM, PRICE)}
        for cells in _html.require(rows, f"{what} rows"):
            yield _item({label: _html.text(cells[i]) for label, i in columns.items()}, count, url, fetched_at)


def _panel_size(doc: Tag, panel: Tag) -> int:
    """GPUs per instance in a tab: the label of the tab button that names the panel ("8x")."""
    tab = doc.find(id=panel.get("aria-labelledby")) if panel.get("aria-labelledby") else None
    match = _SIZE.match(_html.text(tab)) if tab is not None else None
    if match is None:
        raise ParseError(f"Lambda instances page: tabpanel {panel.get('id')!r} has no 'Nx' tab label")
    return int(match.group(1))


def _item(row: dict[str, str], count: int, url: str, fetched_at: datetime) -> ParseItem:
    reason = _html.not_a_price(row[PRICE])
    if reason is None and row[PLAN] in AMBIGUOUS_PLANS:
        reason = f"ambiguous_form_factor: {row[PLAN]!r} may be {AMBIGUOUS_PLANS[row[PLAN]]}; the page does not say"
    if reason is not None:
        return Rejected("offers", (reason,), row | {"gpus": count})
    vram = _GB.match(row[VRAM])
    ram = _GIB.match(row[RAM])
    memory = float(vram.group(1)) if vram else None
    plan = row[PLAN]
    return Offer(
        provider="lambda",
        offer_id=f"page/{count}x/{plan} {row[VRAM]}",
        source=SOURCE.name,
        instance_type=f"{count}x {plan} {row[VRAM]}".strip(),
        region="global",
        market="on_demand",
        tier=None,
        gpu_name=plan,
        gpu_model=GPU_PLANS.get((plan, memory)) if memory is not None else None,
        gpu_count=float(count),
        gpu_memory_gb=memory,
        vcpus=_html.number(row[VCPUS]),
        ram_gb=gb_from_gib(float(ram.group(1))) if ram else None,
        price=_html.usd(row[PRICE]),
        price_unit="gpu_hour",
        currency="USD",
        availability="unknown",
        available_count=None,
        interconnect=None,
        fabric=None,
        fabric_gbps=None,
        source_url=url,
        scraped_at=fetched_at,
    )


SOURCE = Source(
    name="lambda-page",
    fallback_for="lambda-instance-types",
    provider="lambda",
    description="Lambda instances page: per-GPU-hour on-demand prices per instance size; keyless fallback to the API (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://docs.lambda.ai/public-cloud/billing",
    gpu_targets=frozenset(GPU_PLANS.values()),
)
