"""AWS spot prices from the public spot feed (spot.json), Linux, per region and instance type.

The feed carries prices only and lists every instance type; the instance-type grammar in
`scrapers._aws` says which are GPU offers (the rest are skipped and counted, not rejected) and
which GPU, and its instance table gives count and host specs. It also parses the legacy JSONP body (`callback({...})` from spot.js, frozen
since 2024-05) with its old region aliases, so archived captures stay readable.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.scrapers import _aws, _json
from gpucat.scrapers.base import Fetcher, Source

HOST = "website.spot.ec2.aws.a2z.com"
URL = f"https://{HOST}/spot.json"


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def load_feed(body: bytes) -> dict[str, Any]:
    """JSON, or the legacy JSONP wrapper `callback(...);` around the same object."""
    text = body.decode("utf-8").strip()
    if text.startswith("callback("):
        text = text[len("callback(") :].rstrip(";").rstrip()
        if not text.endswith(")"):
            raise ParseError("spot.js body is truncated: no closing parenthesis")
        text = text[:-1]
    feed = _json.document(text, "spot feed")
    if not isinstance(feed, dict) or not isinstance(feed.get("config"), dict) or "regions" not in feed["config"]:
        raise ParseError("spot feed lacks config.regions")
    return feed


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    feed = load_feed(body.read())
    currencies = feed["config"].get("currencies") or ["USD"]
    not_gpu: list[str] = []
    for region_block in feed["config"]["regions"]:  # a block of the wrong shape: the frame fails the feed
        region = _aws.LEGACY_REGIONS.get(region_block["region"], region_block["region"])
        for group in region_block["instanceTypes"]:
            for size in group["sizes"]:
                decoded = _aws.decode(size["size"])
                if decoded.kind == "not_gpu":
                    not_gpu.append(size["size"])
                    continue
                item = _offer(region, size, decoded, currencies[0])
                if item is not None:
                    yield item
    if not_gpu:
        yield Skipped("not_gpu: not an accelerated instance family", len(not_gpu), tuple(sorted(set(not_gpu)))[:5])


def _offer(region: str, size: dict[str, Any], decoded: _aws.Decoded, currency: str) -> ParseItem | None:
    instance_type = size["size"]
    linux = next((c for c in size["valueColumns"] if c["name"] == "linux"), None)
    if linux is None:
        return None  # Windows-only entry
    quoted = linux["prices"].get(currency)
    raw = {"instance_type": instance_type, "region": region, "price": quoted}
    try:
        price = float(quoted)
    except (TypeError, ValueError):
        price = 0.0
    if price <= 0:  # "N/A*": not offered as spot there; "0": a newer type not priced yet
        return Rejected("offers", (f"no_price: {quoted!r}",), raw)
    if decoded.kind == "unknown_gpu":
        return Rejected("offers", (f"unknown_gpu: {decoded.family!r}", str(decoded.why)), raw)
    spec = _aws.INSTANCES.get(instance_type)
    if spec is None:
        return Rejected("offers", (f"unknown_instance_type: {instance_type!r}", "GPU count and specs not in the AWS instance table"), raw)
    return Offer(
        offer_id=f"{instance_type}/{region}/spot",
        instance_type=instance_type,
        region=region,
        market="spot",
        gpu_name=decoded.family,
        gpu_model=decoded.gpu_model,
        gpu_count=float(spec.gpu_count),
        gpu_memory_gb=round(spec.gpu_memory_gib * _aws.GIB_TO_GB, 3) if spec.gpu_memory_gib else None,
        vcpus=float(spec.vcpus),
        ram_gb=round(spec.ram_gib * _aws.GIB_TO_GB, 3),
        price=price,
        price_unit="instance_hour",
        currency=currency,
        availability="unknown",
        interconnect=spec.interconnect,
        fabric=spec.fabric,
        fabric_gbps=spec.fabric_gbps,
    )


SOURCE = Source(
    name="aws-spot",
    provider="aws",
    description="EC2 spot price feed (spot.json): Linux spot prices of GPU instances",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    gpu_targets=_aws.GPU_TARGETS,
    docs_url="https://aws.amazon.com/ec2/spot/pricing/",
)
