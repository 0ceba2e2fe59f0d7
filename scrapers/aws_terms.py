"""AWS price list (CSV): EBS volume prices and internet egress tiers, the machine-readable terms.

Two offer files per region, both streamed and pre-filtered on raw bytes (`scrapers._linescan`)
like the EC2 offers: the `AmazonEC2` region file holds the EBS volume SKUs (Product Family
`Storage`, `Volume API Name` gp3 / gp2, usage type `EBS:VolumeUsage.<type>`, unit `GB-Mo`), the
`AWSDataTransfer` region file the egress schedule (`Transfer Type` `AWS Outbound`, `To Location`
`External`: one SKU whose rate rows carry the tiers as StartingRange / EndingRange, in GB).
Which offer a file is comes from its preamble's OfferCode, never from its URL.

Only the region whose prices the provider-wide terms quote is fetched (the EC2 region file is
hundreds of MB for a handful of storage rows); the parser keeps whatever AWS Region rows a file
holds (Local Zones are skipped) and says which region each row prices. What the price list does
not state (whether a volume survives a stop, the account-wide 100 GB free allowance) stays in
the reviewed terms rows, which the `storage_terms` / `egress_terms` views merge in.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import IO

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Page, ParseItem, Rejected, ScrapedEgressTier, ScrapedStorageTerm
from gpucat.scrapers import _linescan
from gpucat.scrapers.base import Fetcher, Source

HOST = "pricing.us-east-1.amazonaws.com"
BASE = f"https://{HOST}/offers/v1.0/aws"
REGIONS = ("us-east-1",)  # the region AWS's pricing pages quote first; see terms_reference_regions
EC2_OFFER, TRANSFER_OFFER = "AmazonEC2", "AWSDataTransfer"

# Volume types a GPU job keeps its data on, with the product names the reviewed rows use. io1/io2
# (also priced per provisioned IOPS) and HDD types are not a job's working disk.
VOLUME_PRODUCTS = {"gp3": "EBS gp3", "gp2": "EBS gp2"}
STORAGE_COLUMNS = (
    "SKU", "TermType", "PriceDescription", "StartingRange", "EndingRange", "Unit", "PricePerUnit", "Currency",
    "Product Family", "Location Type", "Region Code", "usageType", "Volume API Name", "Max Volume Size", "Max throughput/volume",
)  # fmt: skip
TRANSFER_COLUMNS = (
    "SKU", "TermType", "PriceDescription", "StartingRange", "EndingRange", "Unit", "PricePerUnit", "Currency",
    "Transfer Type", "From Location Type", "To Location", "usageType", "From Region Code",
)  # fmt: skip
# Every kept line holds these quoted values (TermType "OnDemand" as its own field).
_STORAGE_TOKENS = (b'"Storage"', b"EBS:VolumeUsage.")
_TRANSFER_TOKENS = (b'"AWS Outbound"', b'"External"')
_PREAMBLE_MAX_LINES = 20
GIB_GB = 1.073741824
_SIZE_GB = {"GiB": GIB_GB, "TiB": GIB_GB * 1024}
_RATE_MB_S = {"MiB/s": 1.048576, "MB/s": 1.0}


def region_urls(region: str) -> tuple[str, str]:
    return f"{BASE}/{EC2_OFFER}/current/{region}/index.csv", f"{BASE}/{TRANSFER_OFFER}/current/{region}/index.csv"


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    for region in REGIONS:
        for url in region_urls(region):
            yield fetcher.get(url)


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    offer, header = _read_preamble(body)
    col = {name: i for i, name in enumerate(header)}
    if offer == EC2_OFFER:
        yield from _storage(body, header, col, url)
    elif offer == TRANSFER_OFFER:
        yield from _transfer(body, header, col, url)
    else:
        raise ParseError(f"AWS price list {url}: offer {offer!r} carries no terms gpucat reads")


def _read_preamble(body: IO[bytes]) -> tuple[str, list[str]]:
    offer = ""
    for _ in range(_PREAMBLE_MAX_LINES):
        try:
            line = _linescan.read_line(body)
        except _linescan.LineTooLong as exc:
            raise ParseError(f"not an AWS price list CSV: {exc}") from None
        if not line:
            break
        fields = next(csv.reader([line.decode("utf-8")]))
        if fields[:1] == ["OfferCode"] and len(fields) == 2:
            offer = fields[1]
        elif fields[:1] == ["SKU"]:
            return offer, fields
    raise ParseError("not an AWS price list CSV: no SKU header in the first lines")


def _scan(body: IO[bytes], flt: _linescan.LineFilter) -> Iterator[bytes | _linescan.TrailingBytes]:
    try:
        yield from _linescan.scan_stream(body, flt)
    except _linescan.LineTooLong as exc:
        raise ParseError(f"not an AWS price list CSV: {exc}") from None


def _rows(
    body: IO[bytes], header: list[str], col: dict[str, int], needed: Sequence[str], tokens: tuple[bytes, ...], table: str
) -> Iterator[list[str] | Rejected]:
    """The file's candidate rows as fields; a line that is not a well-formed row is rejected for `table`."""
    missing = [name for name in needed if name not in col]
    if missing:
        raise ParseError(f"AWS price list header lacks columns: {', '.join(missing)}")
    start = body.tell()
    sample = body.read(_linescan.BLOCK_BYTES)
    body.seek(start)
    flt = _linescan.LineFilter(tokens, col["TermType"], b'"OnDemand"').rarest_first(sample)
    for line in _scan(body, flt):
        if isinstance(line, _linescan.TrailingBytes):
            raise ParseError("AWS price list is truncated: the last line has no line end")
        text = bytes(line).decode("utf-8")
        try:
            row = next(csv.reader([text]))
        except csv.Error as exc:
            yield Rejected(table, (f"malformed_csv_row: {exc}",), {"line": text[:500]})
            continue
        if len(row) != len(header):
            yield Rejected(table, (f"malformed_csv_row: {len(row)} fields, header has {len(header)}",), {"line": text[:500]})
            continue
        yield row


def _storage(body: IO[bytes], header: list[str], col: dict[str, int], url: str) -> Iterator[ParseItem]:
    found = 0
    for row in _rows(body, header, col, STORAGE_COLUMNS, _STORAGE_TOKENS, "scraped_storage_terms"):
        if isinstance(row, Rejected):
            yield row
            continue

        def get(name: str, row: list[str] = row) -> str:
            return row[col[name]]

        api_name = get("Volume API Name")
        if not (
            get("TermType") == "OnDemand"
            and get("Product Family") == "Storage"
            and get("Location Type") == "AWS Region"
            and api_name in VOLUME_PRODUCTS
            and get("usageType").endswith(f"EBS:VolumeUsage.{api_name}")
        ):
            continue
        found += 1
        raw = {name: get(name) for name in ("SKU", "Region Code", "usageType", "Unit", "PricePerUnit", "Currency", "StartingRange", "EndingRange")}
        if get("Unit") != "GB-Mo" or get("Currency") != "USD" or (get("StartingRange"), get("EndingRange")) != ("0", "Inf"):
            yield Rejected("scraped_storage_terms", (f"unexpected_price_dimension: {get('Unit')} {get('Currency')} {get('StartingRange')}-{get('EndingRange')}",), raw)
            continue
        try:
            price = float(get("PricePerUnit"))
        except ValueError as exc:
            yield Rejected("scraped_storage_terms", (f"unparseable_number: {exc}",), raw)
            continue
        quote = f"SKU {get('SKU')}, {get('usageType')}, {get('PricePerUnit')} USD per GB-Mo: {get('PriceDescription')}"
        segments = [f'usd_per_gb_month,original_price: "{quote}" <{url}>']
        max_size_gb = _scaled(get("Max Volume Size"), _SIZE_GB)
        if max_size_gb is not None:
            segments.append(f'max_size_gb: "Max Volume Size {get("Max Volume Size")}" <{url}>')
        throughput = _scaled(get("Max throughput/volume"), _RATE_MB_S)
        if throughput is not None:
            segments.append(f'read_throughput_mb_s: "Max throughput/volume {get("Max throughput/volume")}" <{url}>')
        yield ScrapedStorageTerm(
            kind="block",
            product=VOLUME_PRODUCTS[api_name],
            region=get("Region Code"),
            usd_per_gb_month=price,
            original_currency="USD",
            original_price=price,
            original_unit="GB-month",
            max_size_gb=max_size_gb,
            read_throughput_mb_s=throughput,
            evidence=" || ".join(segments),
            notes="max_size_gb and read_throughput_mb_s are the volume type's limits (GiB and MiB/s converted); the price is per GB-month provisioned",
        )
    if not found:
        raise ParseError(f"AWS price list {url}: no EBS volume price ({', '.join(VOLUME_PRODUCTS)}); has the Storage family changed?")


def _transfer(body: IO[bytes], header: list[str], col: dict[str, int], url: str) -> Iterator[ParseItem]:
    schedules: dict[str, list[list[str]]] = defaultdict(list)
    for row in _rows(body, header, col, TRANSFER_COLUMNS, _TRANSFER_TOKENS, "scraped_egress_terms"):
        if isinstance(row, Rejected):
            yield row
            continue
        if (
            row[col["TermType"]] == "OnDemand"
            and row[col["Transfer Type"]] == "AWS Outbound"
            and row[col["To Location"]] == "External"
            and row[col["From Location Type"]] == "AWS Region"
        ):
            schedules[row[col["From Region Code"]]].append(row)
    if not schedules:
        raise ParseError(f"AWS price list {url}: no internet egress (AWS Outbound to External) rows")
    for region, rows in sorted(schedules.items()):
        yield from _schedule(region, rows, col, url)


def _schedule(region: str, rows: list[list[str]], col: dict[str, int], url: str) -> Iterator[ParseItem]:
    """One region's rate rows as tiers in range order; a schedule with a bad row is rejected whole
    (a gap in the tiers would price the traffic in it as unknown, or worse, at the wrong rate)."""
    try:
        ranges = sorted(((float(r[col["StartingRange"]]), _upper(r[col["EndingRange"]]), float(r[col["PricePerUnit"]]), r) for r in rows), key=lambda t: t[0])
    except ValueError as exc:
        yield Rejected("scraped_egress_terms", (f"unparseable_number: {exc}",), {"region": region, "skus": sorted({r[col["SKU"]] for r in rows})})
        return
    if any(r[col["Currency"]] != "USD" or r[col["Unit"]] != "GB" for r in rows):
        units = sorted({f"{r[col['Currency']]} per {r[col['Unit']]}" for r in rows})
        yield Rejected("scraped_egress_terms", (f"unexpected_price_dimension: {', '.join(units)} (read: USD per GB)",), {"region": region})
        return
    for tier, (start, end, price, row) in enumerate(ranges, start=1):
        quote = f"SKU {row[col['SKU']]}, {row[col['usageType']]}, {row[col['StartingRange']]}-{row[col['EndingRange']]} GB at {row[col['PricePerUnit']]} USD per GB: {row[col['PriceDescription']]}"
        yield ScrapedEgressTier(
            scope="internet",
            region=region,
            tier=tier,
            from_gb=start,
            to_gb=end,
            usd_per_gb=price,
            original_price=price,
            original_unit="GB",
            # free_allowance_gb_month: account-wide, across services: not in the price list
            evidence=f'from_gb,to_gb,usd_per_gb,original_price: "{quote}" <{url}>',
        )


def _upper(value: str) -> float | None:
    return None if value == "Inf" else float(value)


def _scaled(value: str, units: dict[str, float]) -> float | None:
    """'16 TiB' -> 17592.186 (GB); '1000 MiB/s' -> 1048.576 (MB/s); anything else -> None."""
    number, _, unit = (value or "").strip().partition(" ")
    scale = units.get(unit)
    try:
        return round(float(number.replace(",", "")) * scale, 3) if scale is not None else None
    except ValueError:
        return None


SOURCE = Source(
    name="aws-terms",
    provider="aws",
    description="AWS price list CSVs: EBS gp3/gp2 GB-month prices and internet egress tiers (terms)",
    tables=("scraped_storage_terms", "scraped_egress_terms"),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    max_response_bytes=20 * 10**9,
    docs_url="https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-the-aws-price-list-bulk-api.html",
)
