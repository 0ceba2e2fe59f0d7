"""Lambda Cloud `GET /api/v1/instance-types`: on-demand instance prices and where capacity is now.

Prices are per instance (`price_cents_per_hour`, in US cents). The answer names only the
regions that have capacity right now (`regions_with_capacity_available`), so each of those is an
`available` offer; a type with capacity nowhere is one `unavailable` offer in region `unknown`,
since the answer does not say where it is sold. Lambda has no spot market. The key
(`LAMBDA_API_KEY`, which needs a payment method on the account) goes as a bearer token; without
it the `lambda` HTML page source is the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.records import Offer, Page, ParseItem, Rejected
from gpucat.schemas.reference import gpu_models
from gpucat.schemas.units import gb_from_gib
from gpucat.scrapers import _json
from gpucat.scrapers._gpus import is_stand_in, resolve
from gpucat.scrapers.base import Fetcher, Source, each_record

HOST = "cloud.lambda.ai"
URL = f"https://{HOST}/api/v1/instance-types"

# (GPU name, nameplate GB, form factor) as Lambda writes them in `gpu_description`, e.g.
# "H100 (80 GB SXM5)" -> canonical gpu_model. Reviewed against Lambda's instance list
# (lambda.ai/instances) and the description pattern gpuhunt parses (lambdalabs.py).
GPUS: dict[tuple[str, int, str | None], str] = {
    ("A10", 24, "PCIe"): "A10",
    ("A6000", 48, None): "RTX-A6000",
    ("A100", 40, "SXM4"): "A100-SXM4-40GB",
    ("A100", 40, "PCIe"): "A100-PCIe-40GB",
    ("A100", 80, "SXM4"): "A100-SXM4-80GB",
    ("H100", 80, "PCIe"): "H100-PCIe",
    ("H100", 80, "SXM5"): "H100-SXM",
    ("GH200", 96, None): "GH200",
    ("B200", 180, "SXM6"): "B200",
}
_SXM = {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM", "B200"}
# "8x H100 (80 GB SXM5)" or, in gpu_description, "H100 (80 GB SXM5)"; older types say "Tesla V100".
_GPU = re.compile(r"^(?:(?P<count>\d+)x )?(?:Tesla )?(?P<name>.+?) \((?P<gb>\d+) GB(?: (?P<form>\w+))?\)$")


def _by_rules(gpu_text: str, description: str) -> str:
    """A GPU the reviewed table lacks, by the catalog rules: the vendor's wording ("NVIDIA A100
    PCIe", "NVIDIA Quadro RTX 6000", "NVIDIA A100 80 GB SXM4"), with the memory and form factor
    the instance description states when the GPU's own text leaves them out ("1x A100 (40 GB PCIe)")."""
    described = _GPU.match(description)
    memory = float(described["gb"]) if described else None
    form = described["form"] if described else None
    try:
        model = resolve(gpu_text, provider="lambda", memory_gb=memory)
    except LookupError:
        if form is None:
            raise
        return resolve(f"{gpu_text} {form}", provider="lambda", memory_gb=memory)
    if form is not None and is_stand_in(gpu_models()[model]):  # the description says what the GPU's text left unsaid
        return resolve(f"{gpu_text} {form}", provider="lambda", memory_gb=memory)
    return model


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL, headers={"Authorization": f"Bearer {fetcher.api_key}"})


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    yield from each_record("offers", _json.page(body, "Lambda response", "data", kind=dict).values(), _offers)


def _offers(entry: dict[str, Any]) -> Iterator[ParseItem]:
    itype = entry["instance_type"]
    name: str = itype["name"]
    cents = itype["price_cents_per_hour"]
    specs = itype["specs"]
    regions = [region["name"] for region in entry["regions_with_capacity_available"]]
    gpu_text: str = itype.get("gpu_description") or itype["description"]
    match = _GPU.match(gpu_text)
    gpu_model = GPUS.get((match["name"], int(match["gb"]), match["form"])) if match else None
    if gpu_model is None:
        try:
            gpu_model = _by_rules(gpu_text, itype["description"])
        except LookupError as exc:
            yield Rejected("offers", (str(exc),), entry)
            return
    described = _GPU.match(itype["description"])
    if described and described["count"] and int(described["count"]) != specs["gpus"]:
        yield Rejected("offers", (f"gpu_count_mismatch: {itype['description']!r} vs specs.gpus {specs['gpus']}",), entry)
        return
    if not isinstance(cents, int | float) or cents <= 0:
        yield Rejected("offers", (f"no_price: price_cents_per_hour {cents!r}",), entry)
        return
    count = specs["gpus"]
    places = [(region, "available") for region in regions] or [("unknown", "unavailable")]
    for region, availability in places:
        yield Offer(
            offer_id=f"{name}/{region}",
            instance_type=name,
            region=region,
            market="on_demand",
            gpu_name=match["name"] if match else gpu_text,
            gpu_model=gpu_model,
            gpu_count=float(count),
            vcpus=float(specs["vcpus"]),
            ram_gb=gb_from_gib(specs["memory_gib"]),
            price=cents / 100,
            price_unit="instance_hour",
            currency="USD",
            availability=availability,
            interconnect=None if count == 1 else ("nvswitch" if gpu_model in _SXM else "pcie"),
        )


SOURCE = Source(
    name="lambda-instance-types",
    provider="lambda",
    description="Lambda Cloud instance types: on-demand per-instance prices and regions with capacity now",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="LAMBDA_API_KEY",
    api_key_required=True,
    docs_url="https://docs.lambda.ai/api/cloud",
    gpu_targets=frozenset(GPUS.values()) | {"Quadro-RTX-6000"},  # vendor wordings by the catalog rules
)
