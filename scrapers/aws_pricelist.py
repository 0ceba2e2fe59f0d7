"""AWS EC2 bulk price list (CSV): on-demand Linux prices of GPU instances.

Endpoint: the region index lists every region's current offer file; each is a CSV of
~100–300 MB, and the all-region file is several GB, so the body streams to disk and the
parser reads it in blocks (memory stays flat whatever the file size), searching the raw bytes
for the rare lines that can be kept (`scrapers._linescan`; a big file across processes) and
tokenizing only those. Columns are looked
up by name: AWS adds columns over time. Rows are kept when TermType=OnDemand, Unit=Hrs,
Tenancy=Shared, Operating System=Linux, CapacityStatus=Used, no pre-installed software and
MarketOption=OnDemand (Reserved rows also say OnDemand there, hence the TermType test).

`GPUCAT_AWS_REGIONS`: unset = every region in the index; `us-east-1,us-west-2` = those;
`*` = the single all-region file.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Offer, Page, ParseItem, Rejected, Skipped
from gpucat.scrapers import _aws, _json, _linescan
from gpucat.scrapers.base import Fetcher, Source, read_at_most, shape_error

HOST = "pricing.us-east-1.amazonaws.com"
BASE = f"https://{HOST}"
REGION_INDEX_URL = f"{BASE}/offers/v1.0/aws/AmazonEC2/current/region_index.json"
ALL_REGIONS_URL = f"{BASE}/offers/v1.0/aws/AmazonEC2/current/index.csv"

REQUIRED = (
    "TermType", "Unit", "PricePerUnit", "Currency", "Product Family", "Location", "Instance Type",
    "vCPU", "Memory", "Tenancy", "Operating System", "CapacityStatus", "GPU", "MarketOption",
    "Pre Installed S/W", "Region Code",
)  # fmt: skip
# Every kept row contains these quoted values somewhere (and TermType "OnDemand" as its own field):
# searching raw bytes for them skips ~99% of the file before anything is decoded or split.
_MUST_CONTAIN = (b'"OnDemand"', b'"Hrs"', b'"Linux"', b'"Shared"', b'"Used"')
_PREAMBLE_MAX_LINES = 20
# The region index lists ~30 regions in a few KB; the source's byte limit is sized for the CSVs.
REGION_INDEX_MAX_BYTES = 4 << 20
# "2048 GiB", "192 GB", and for HBM parts in newer files "640 GB HBM3".
_SIZE = re.compile(r"^\s*([\d.]+)\s*(GiB|GB|MiB|TiB)\b")


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    wanted = fetcher.settings.aws_regions or ()
    if wanted == ("*",):
        yield fetcher.get(ALL_REGIONS_URL)
        return
    index = fetcher.get(REGION_INDEX_URL)
    with index.open() as body:
        content = read_at_most(body, REGION_INDEX_MAX_BYTES, "AWS region index")
    urls = region_file_urls(content, set(wanted))
    # Each file URL names its version: the same list as the last good run means nothing changed.
    fetcher.version(" ".join(urls))
    for url in urls:
        yield fetcher.get(url)


def region_file_urls(region_index: bytes, wanted: set[str]) -> list[str]:
    """CSV URLs of the regions in the index (all, or the `wanted` ones), in a stable order."""
    regions = _json.page(region_index, "AWS region index", "regions", kind=dict)
    paths = {code: entry.get("currentVersionUrl") if isinstance(entry, dict) else None for code, entry in regions.items()}
    if not all(isinstance(path, str) for path in paths.values()):
        raise shape_error("AWS region index", "a region has no currentVersionUrl")
    missing = wanted - paths.keys()
    if missing:
        raise ParseError(f"regions not in the AWS region index: {', '.join(sorted(missing))}")
    return [BASE + re.sub(r"\.json$", ".csv", paths[code]) for code in sorted(wanted or paths)]


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    header = _read_header(body)
    col = {name: i for i, name in enumerate(header)}
    missing = [name for name in REQUIRED if name not in col]
    if missing:
        raise ParseError(f"AWS price list header lacks columns: {', '.join(missing)}")
    width = len(header)
    # One field per column: a quoted value without quotes inside, or nothing. A line this does
    # not match (an escaped quote, a wrong field count) goes through the csv module instead.
    row_pattern = re.compile(",".join([r'(?:"([^"\n]*)")?'] * width) + r"\n")
    not_gpu: list[str] = []
    for line in _candidate_lines(body, col["TermType"]):
        text = line.decode("utf-8")
        match = row_pattern.fullmatch(text)
        if match is not None:
            row: Sequence[str] = match.groups("")
        else:
            try:
                row = next(csv.reader([text]))
            except csv.Error as exc:
                yield Rejected("offers", (f"malformed_csv_row: {exc}",), {"line": text[:500]})
                continue
            if len(row) != width:
                yield Rejected("offers", (f"malformed_csv_row: {len(row)} fields, header has {width}",), {"line": text[:500]})
                continue
        item = _offer(row, col)
        if isinstance(item, str):
            not_gpu.append(item)
        elif item is not None:
            yield item
    if not_gpu:
        yield Skipped("not_gpu: not an accelerated instance family", len(not_gpu), tuple(sorted(set(not_gpu)))[:5])


def _candidate_lines(body: IO[bytes], term_type_index: int) -> Iterator[bytes]:
    """The lines after the header that can be kept rows (a superset), in file order.

    Raw bytes are searched for the rarest required token first (`scrapers._linescan`); a file big
    enough to pay for it is scanned by one process per CPU. A cut last line fails the source.
    """
    start = body.tell()
    sample = body.read(_linescan.BLOCK_BYTES)
    body.seek(start)
    flt = _linescan.LineFilter(_MUST_CONTAIN, term_type_index, b'"OnDemand"').rarest_first(sample)
    path = Path(getattr(body, "name", "") or "")
    processes = _linescan.processes_for(path.stat().st_size - start) if isinstance(getattr(body, "name", None), str) and path.is_file() else 1
    lines = _linescan.scan_file(path, body, start, flt, processes) if processes > 1 else _linescan.scan_stream(body, flt)
    try:
        yield from _whole_lines(lines)
    except _linescan.LineTooLong as exc:
        raise ParseError(f"not an AWS price list CSV: {exc}") from None


def _whole_lines(lines: Iterator[bytes | _linescan.TrailingBytes]) -> Iterator[bytes]:
    for line in lines:
        if isinstance(line, _linescan.TrailingBytes):
            # AWS ends every line, the last one included, with LF: a cut line means a cut file.
            raise ParseError("AWS price list is truncated: the last line has no line end")
        yield line


def _read_header(body: IO[bytes]) -> list[str]:
    for _ in range(_PREAMBLE_MAX_LINES):
        try:
            line = _linescan.read_line(body)
        except _linescan.LineTooLong as exc:
            raise ParseError(f"not an AWS price list CSV: {exc}") from None
        if not line:
            break
        if line.startswith(b'"SKU"'):
            return next(csv.reader([line.decode("utf-8")]))
    raise ParseError("not an AWS price list CSV: no SKU header in the first lines")


def _offer(row: Sequence[str], col: dict[str, int]) -> ParseItem | str | None:
    """The row's offer or rejection; its instance type when it is not a GPU offer; None when out of scope."""

    def get(name: str) -> str:
        return row[col[name]]

    if not (
        get("TermType") == "OnDemand"
        and get("Unit") == "Hrs"
        and get("Tenancy") == "Shared"
        and get("Operating System") == "Linux"
        and get("CapacityStatus") == "Used"
        and get("Pre Installed S/W") in ("", "NA")
        and get("MarketOption") == "OnDemand"
        and get("Product Family").startswith("Compute Instance")
    ):
        return None
    instance_type = get("Instance Type")
    decoded = _aws.decode(instance_type)
    gpus = get("GPU")
    stated = gpus not in ("", "0", "NA")
    if decoded.kind == "not_gpu" and not stated:
        return instance_type
    region = get("Region Code")
    raw = {"instance_type": instance_type, "region": region, "GPU": gpus, "PricePerUnit": get("PricePerUnit"), "sku": row[col["SKU"]] if "SKU" in col else None}
    if decoded.kind == "not_gpu":
        # The grammar says CPU-only but the price list counts GPUs: a family to add, not to hide.
        return Rejected("offers", (f"unknown_gpu: {decoded.family!r}", f"the price list states {gpus} GPUs for a family the grammar does not know as accelerated"), raw)
    if decoded.kind == "unknown_gpu":
        return Rejected("offers", (f"unknown_gpu: {decoded.family!r}", str(decoded.why)), raw)
    spec = _aws.INSTANCES.get(instance_type)
    try:
        price = float(get("PricePerUnit"))
        vcpus = float(get("vCPU")) if get("vCPU") else None
        gpu_count = float(gpus) if stated else None
    except ValueError as exc:
        return Rejected("offers", (f"unparseable_number: {exc}",), raw)
    if gpu_count is None:
        # Trainium and Inferentia sizes leave the GPU column empty: the instance table counts them.
        if spec is None:
            return Rejected("offers", (f"unknown_instance_type: {instance_type!r}", "no GPU count in the price list and none in the AWS instance table"), raw)
        gpu_count = float(spec.gpu_count)
    gpu_memory_total = _gb(get("GPU Memory")) if "GPU Memory" in col else None
    gpu_memory_gb = _per_device_gb(gpu_memory_total, gpu_count)
    if gpu_memory_gb is None and spec is not None and spec.gpu_memory_gib:
        gpu_memory_gb = round(spec.gpu_memory_gib * _aws.GIB_TO_GB, 3)
    return Offer(
        offer_id=f"{instance_type}/{region}/on_demand",
        instance_type=instance_type,
        region=region,
        market="on_demand",
        gpu_name=decoded.family,
        gpu_model=decoded.gpu_model,
        gpu_count=gpu_count,
        gpu_memory_gb=gpu_memory_gb,
        vcpus=vcpus,
        ram_gb=_gb(get("Memory")),
        price=price,
        price_unit="instance_hour",
        currency=get("Currency"),
        availability="unknown",
        interconnect=_aws.interconnect_for(instance_type, gpu_count),
        fabric=spec.fabric if spec else None,
        fabric_gbps=spec.fabric_gbps if spec else None,
    )


def _per_device_gb(total_gb: float | None, gpu_count: float) -> float | None:
    """Memory each GPU device exposes; a fractional slice (g6f: 0.25 GPU) is one device of its own size."""
    if not total_gb or gpu_count <= 0:
        return None
    return round(total_gb / gpu_count, 3) if gpu_count >= 1 else total_gb


def _gb(value: str) -> float | None:
    """'2048 GiB' -> 2199.023 GB; '192 GB' -> 192.0; 'NA' -> None."""
    match = _SIZE.match(value or "")
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2)
    factor = {"GB": 1.0, "GiB": _aws.GIB_TO_GB, "MiB": _aws.GIB_TO_GB / 1024, "TiB": _aws.GIB_TO_GB * 1024}[unit]
    return round(number * factor, 3)


SOURCE = Source(
    name="aws-pricelist",
    provider="aws",
    description="EC2 bulk price list CSV: on-demand Linux GPU instances, per region",
    tables=("offers",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    max_response_bytes=20 * 10**9,
    gpu_targets=_aws.GPU_TARGETS,
    docs_url="https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-the-aws-price-list-bulk-api.html",
)
