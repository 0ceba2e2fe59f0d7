"""Hot Aisle: AMD Instinct VMs available to the key's team, priced in US cents per hour.

Hot Aisle's API needs a key (`HOTAISLE_API_KEY`, sent as `Authorization: Token …`); without it
the source is skipped. The key's user lists its teams at `/api/user/`; the first team's
`/virtual_machines/available/` lists the VM configurations that can be provisioned now, each
with `OnDemandPrice` in **cents** per instance-hour and `Specs` (RAM and disk in bytes, GPUs as
`{count, model}`). A listed configuration is `available`; Hot Aisle gives no count. Hot Aisle
has one site, `us-michigan-1` (gpuhunt providers/hotaisle.py), and no spot market.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any
from urllib.parse import quote, urlsplit

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, ParseItem, Rejected
from gpucat.scrapers import _gpus, _json
from gpucat.scrapers.base import Fetcher, Page, Source, each_record

HOST = "admin.hotaisle.app"
API = f"https://{HOST}/api"
USER_URL = f"{API}/user/"
REGION = "us-michigan-1"
BYTES_PER_GIB = 2**30

# Hot Aisle GPU `model` -> canonical model (Hot Aisle rents AMD Instinct only; gpuhunt
# providers/hotaisle.py, dstack 0.22.3 release notes).
GPU_MODELS: dict[str, str] = {
    "MI300X": "MI300X",
    "MI325X": "MI325X",
    "MI355X": "MI355X",
}


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    headers = {"Authorization": f"Token {fetcher.api_key}"} if fetcher.api_key else None
    user = fetcher.get(USER_URL, headers=headers)
    yield user
    with user.open() as body:
        handle = _first_team(_json.document(body, "Hot Aisle /user/ answer"))
    yield fetcher.get(f"{API}/teams/{quote(handle, safe='')}/virtual_machines/available/", headers=headers)


def _first_team(user: Any) -> str:
    teams = user.get("teams") if isinstance(user, dict) else None
    if not teams or not isinstance(teams[0], dict) or not teams[0].get("handle"):
        raise ParseError("Hot Aisle /user/ answer names no team for this key")
    return teams[0]["handle"]


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    payload = _json.document(body, "Hot Aisle answer")
    if urlsplit(url).path.rstrip("/").endswith("/user"):
        _first_team(payload)  # the team lookup: no offers, but it must still name a team
        return
    yield from each_record("offers", _json.member(payload, "Hot Aisle available-VM answer"), _vm)


def _vm(vm: dict[str, Any]) -> Iterator[ParseItem]:
    specs = vm["Specs"]
    gpus = specs["gpus"]
    models = {gpu["model"] for gpu in gpus}
    if len(models) != 1:
        yield Rejected("offers", (f"unknown_gpu: {' + '.join(sorted(models))!r}", "expected one GPU model per VM"), vm)
        return
    gpu_name = models.pop()
    gpu_model, why = _gpus.mapped(GPU_MODELS, gpu_name, provider="hotaisle")  # names outside the table by the catalog rules
    if gpu_model is None:
        yield Rejected("offers", (str(why),), vm)
        return
    cents = vm["OnDemandPrice"]
    if not isinstance(cents, int | float) or isinstance(cents, bool) or cents <= 0:
        yield Rejected("offers", (f"no_price: OnDemandPrice {cents!r}",), vm)
        return
    count = sum(int(gpu["count"]) for gpu in gpus)
    cores = int(specs["cpu_cores"])
    ram_gib = specs["ram_capacity"] / BYTES_PER_GIB
    yield Offer(
        offer_id=f"{count}x-{gpu_name}/{cores}c/{ram_gib:g}gib/on_demand",
        instance_type=f"{count}x {gpu_name}, {cores} vCPU, {ram_gib:g} GiB RAM",
        region=REGION,
        market="on_demand",
        gpu_name=gpu_name,
        gpu_model=gpu_model,
        gpu_count=float(count),
        # gpu_memory_gb: not stated: the model's nameplate memory
        vcpus=float(cores),
        ram_gb=round(specs["ram_capacity"] / 10**9, 3),
        price=round(cents / 100, 6),
        price_unit="instance_hour",
        currency="USD",
        availability="available",
        interconnect="infinity_fabric" if count > 1 else None,
    )


SOURCE = Source(
    name="hotaisle",
    provider="hotaisle",
    description="Hot Aisle: AMD Instinct VM configurations available now, per-instance prices (key required)",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    api_key_env="HOTAISLE_API_KEY",
    api_key_required=True,
    docs_url="https://admin.hotaisle.app/api/docs",
    gpu_targets=frozenset(GPU_MODELS.values()),
)
