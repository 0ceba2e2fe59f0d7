"""Lambda's public pricing page: the keyless source of Lambda's on-demand instance prices.

Lambda's API (`lambda-instance-types`) needs LAMBDA_API_KEY, and a key needs a payment method
on file (shared/reference/providers.md, Lambda). This page needs nothing: it is the API's
fallback (`fallback_for`), fetched only when the API's last run was skipped (no key) or failed,
and whichever of the two loads retires the other's current offers, so Lambda's offers never
carry two prices from two sources. Its offer_ids start with "page/".

The page (lambda.ai/pricing, server-rendered HubSpot islands) has ARIA tab lists: each tab button
(role=tab) labels a panel (role=tabpanel, aria-labelledby) holding a <table>. Under "Instances
pricing" the tabs are instance sizes, "8x", "4x", "2x", "1x", and each table has the header row
"Plan | VRAM/GPU | vCPUs | RAM | STORAGE | PRICE/GPU/HR*". The price is per GPU-hour, so an 8x
instance costs 8 times the figure; the GPU count comes from the tab's label. vCPUs and RAM are for
the whole instance. The asterisk's footnote says prices exclude sales tax/VAT/GST.

Traps the real page carries (capture of 2026-08-22, fixtures/lambda/lambda-page/NOTES.md): the
"1-Click Clusters" tabs above ("NVIDIA HGX B200", "NVIDIA H100") use the same tab and table markup
for committed multi-node clusters priced by duration. A tab whose label is not an instance size is
skipped and its rows counted, never read and never a reason to abort the page; a page with no
instance-size tab at all still fails. Hidden panels (the `hidden` attribute) are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO

from bs4 import BeautifulSoup, Tag

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.schemas.units import gb_from_gib
from gpucat.scrapers import _html
from gpucat.scrapers._gpus import resolve
from gpucat.scrapers.base import Fetcher, Source

HOST = "lambda.ai"
URL = f"https://{HOST}/pricing"
PLAN, VRAM, VCPUS, RAM, PRICE = "Plan", "VRAM/GPU", "vCPUs", "RAM", "PRICE/GPU/HR"
# An instance-size tab: "8x" as the page labels it, or a near spelling ("8 x", "8×", "8x GPUs", "8 GPUs").
_SIZE = re.compile(r"^(\d+)\s*(?:[x×](?:\s*gpus?)?|gpus?)$", re.IGNORECASE)
_GB = re.compile(r"^(\d+(?:\.\d+)?)\s*GB$")
_GIB = re.compile(r"^(\d+(?:\.\d+)?)\s*GiB$")

# (plan, VRAM per GPU in GB) -> canonical gpu_model. The plan name carries the form factor
# (SXM, PCIe). Other plans go through the shared rules with their VRAM: one that names no form
# factor ("NVIDIA Tesla V100", 16 GB) maps to the family's stand-in (V100-16GB-AnyForm), not a guess.
GPU_PLANS: dict[tuple[str, float], str] = {
    ("NVIDIA B200 SXM6", 180.0): "B200",
    ("NVIDIA H100 SXM", 80.0): "H100-SXM",
    ("NVIDIA H100 PCIe", 80.0): "H100-PCIe",
    ("NVIDIA A100 SXM", 80.0): "A100-SXM4-80GB",
    ("NVIDIA A100 SXM", 40.0): "A100-SXM4-40GB",
    ("NVIDIA A100 PCIe", 40.0): "A100-PCIe-40GB",
    ("NVIDIA GH200", 96.0): "GH200",
    ("NVIDIA A6000", 48.0): "RTX-A6000",
    ("NVIDIA A10", 24.0): "A10",
    ("NVIDIA Quadro RTX 6000", 24.0): "Quadro-RTX-6000",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    doc = _html.page(body, "Lambda pricing page")
    panels = _html.require(doc.find_all(attrs={"role": "tabpanel"}), "Lambda pricing page: tab panels (role=tabpanel)")
    sizes = 0
    other_tabs: list[str] = []
    other_rows = 0
    for panel in panels:
        tab = _tab_label(doc, panel)
        size = _SIZE.match(tab)
        if size is None:
            other_tabs.append(tab)
            other_rows += sum(1 for tr in panel.find_all("tr") if tr.find("td") is not None)
            continue
        sizes += 1
        count = int(size.group(1))
        what = f"Lambda pricing page, {count}x tab"
        headers, rows = _html.table_by_headers(panel, [PLAN, VRAM, PRICE], what)
        columns = {label: _html.column(headers, label, what) for label in (PLAN, VRAM, VCPUS, RAM, PRICE)}
        for cells in _html.require(rows, f"{what} rows"):
            yield _item({label: _html.text(cells[i]) for label, i in columns.items()}, count)
    if not sizes:
        raise ParseError(f"Lambda pricing page: no instance-size tab ('8x', '4x', ...) among the tabs {other_tabs}")
    if other_tabs:
        yield Skipped("not_instance_tab: a tab that is not an instance size ('Nx'), e.g. 1-Click Clusters", other_rows, tuple(other_tabs[:5]))


def _tab_label(doc: BeautifulSoup, panel: Tag) -> str:
    """The label of the tab button that names the panel (aria-labelledby, or the tab's aria-controls)."""
    tab = doc.find(id=panel.get("aria-labelledby")) if panel.get("aria-labelledby") else None
    if tab is None and panel.get("id"):
        tab = doc.find(attrs={"role": "tab", "aria-controls": panel.get("id")})
    if tab is None:
        raise ParseError(f"Lambda pricing page: tabpanel {panel.get('id')!r} has no tab button naming it")
    return _html.text(tab)


def _item(row: dict[str, str], count: int) -> ParseItem:
    reason = _html.not_a_price(row[PRICE])
    vram = _GB.match(row[VRAM])
    ram = _GIB.match(row[RAM])
    memory = float(vram.group(1)) if vram else None
    plan = row[PLAN]
    gpu_model = GPU_PLANS.get((plan, memory)) if memory is not None else None
    if reason is None and gpu_model is None:
        try:
            gpu_model = resolve(plan, provider="lambda", memory_gb=memory)
        except LookupError as exc:
            reason = str(exc)
    if reason is not None:
        return Rejected("offers", (reason,), row | {"gpus": count})
    return Offer(
        offer_id=f"page/{count}x/{plan} {row[VRAM]}",
        instance_type=f"{count}x {plan} {row[VRAM]}".strip(),
        region="global",
        market="on_demand",
        gpu_name=plan,
        gpu_model=gpu_model,
        gpu_count=float(count),
        gpu_memory_gb=memory,
        vcpus=_html.number(row[VCPUS]),
        ram_gb=gb_from_gib(float(ram.group(1))) if ram else None,
        price=_html.usd(row[PRICE]),
        price_unit="gpu_hour",
        currency="USD",
        availability="unknown",
    )


SOURCE = Source(
    name="lambda-page",
    fallback_for="lambda-instance-types",
    provider="lambda",
    description="Lambda pricing page: per-GPU-hour on-demand prices per instance size; keyless fallback to the API (HTML)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://docs.lambda.ai/public-cloud/billing",
    gpu_targets=frozenset(GPU_PLANS.values()) | {"V100-16GB-AnyForm"},
)
