"""Synthetic AWS EC2 bulk price-list CSV, the size of the all-region file, for benchmarks.

The output follows the real `.../offers/v1.0/aws/AmazonEC2/current/index.csv` layout byte for byte
(see shared/reference/aws-pricelist.md): a 5-line preamble, the 91-column header, every non-empty
field double-quoted and empty fields bare, LF line endings, rows sorted by SKU then OfferTermCode.
The content is invented but shaped like the real file: ~30 regions plus Local Zones, a few hundred
instance types (a few percent of them GPU), every operating system and pre-installed-software
variant, Shared/Dedicated/Host tenancy, the three capacity statuses, Capacity Block rows, and
Reserved terms with their "Upfront Fee" rows. Generation streams to disk in bounded memory.

    python bench/aws_pricelist_gen.py OUT.csv --rows 2000000 [--seed 0]

The row-formatting helpers (`csv_line`, `product_fields`, `sku_lines`, `header_lines`) are public so
that hand-written fixtures use exactly the same serialization.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from math import gcd
from typing import NamedTuple

PUBLICATION_DATE = "2026-11-13T19:42:37Z"
VERSION = "20261113194237"
ON_DEMAND_EFFECTIVE_DATE = "2026-11-01"  # first of the publication month, as in the real file
RESERVED_EFFECTIVE_DATE = "2026-11-13"  # the publication date, as in the real file
DISCLAIMER = (
    "This pricing list is for informational purposes only. All prices are subject to the additional"
    " terms included in the pricing pages on http://aws.amazon.com. All Free Tier prices are also"
    " subject to the terms included at https://aws.amazon.com/free/"
)

COLUMNS = (
    "SKU", "OfferTermCode", "RateCode", "TermType", "PriceDescription", "EffectiveDate",
    "StartingRange", "EndingRange", "Unit", "PricePerUnit", "Currency", "RelatedTo",
    "LeaseContractLength", "PurchaseOption", "OfferingClass", "Product Family", "serviceCode",
    "Location", "Location Type", "Instance Type", "Current Generation", "Instance Family", "vCPU",
    "Physical Processor", "Clock Speed", "Memory", "Storage", "Network Performance",
    "Processor Architecture", "Storage Media", "Volume Type", "Max Volume Size", "Max IOPS/volume",
    "Max IOPS Burst Performance", "Max throughput/volume", "Provisioned", "Tenancy",
    "EBS Optimized", "Operating System", "License Model", "Group", "Group Description",
    "Transfer Type", "From Location", "From Location Type", "To Location", "To Location Type",
    "usageType", "operation", "AvailabilityZone", "CapacityStatus", "ClassicNetworkingSupport",
    "Dedicated EBS Throughput", "ECU", "Elastic Graphics Type", "Enhanced Networking Supported",
    "From Region Code", "GPU", "GPU Memory", "Instance", "Instance Capacity - 10xlarge",
    "Instance Capacity - 12xlarge", "Instance Capacity - 16xlarge", "Instance Capacity - 18xlarge",
    "Instance Capacity - 24xlarge", "Instance Capacity - 2xlarge", "Instance Capacity - 32xlarge",
    "Instance Capacity - 4xlarge", "Instance Capacity - 8xlarge", "Instance Capacity - 9xlarge",
    "Instance Capacity - large", "Instance Capacity - medium", "Instance Capacity - metal",
    "Instance Capacity - xlarge", "instanceSKU", "Intel AVX2 Available", "Intel AVX Available",
    "Intel Turbo Available", "MarketOption", "Normalization Size Factor", "Physical Cores",
    "Pre Installed S/W", "Processor Features", "Product Type", "Region Code", "Resource Type",
    "serviceName", "SnapshotArchiveFeeType", "To Region Code", "Volume API Name",
    "VPCNetworkingSupport",
)  # fmt: skip
PRODUCT_COLUMNS = COLUMNS[15:]
assert len(COLUMNS) == 91

ON_DEMAND_TERM = "JRTCKXETXF"
HOURLY_RATE = "6YS6EN2CT7"
UPFRONT_RATE = "2TG2D8R56U"
HOURS = {"1yr": 8760, "3yr": 26280}


class ReservedTerm(NamedTuple):
    code: str
    lease: str  # LeaseContractLength
    purchase: str  # PurchaseOption
    offering_class: str
    hourly_factor: float  # hourly rate as a share of the on-demand rate
    upfront_factor: float  # upfront fee as a share of on-demand over the whole term


# The 12 Reserved offer-term codes of a "Used" Shared/Dedicated SKU; factors are typical discounts.
RESERVED_TERMS = (
    ReservedTerm("38NPMPTW36", "3yr", "Partial Upfront", "standard", 0.205, 0.205),
    ReservedTerm("4NA7Y494T4", "1yr", "No Upfront", "standard", 0.63, 0.0),
    ReservedTerm("6QCMYABX3D", "1yr", "All Upfront", "standard", 0.0, 0.59),
    ReservedTerm("7NE97W5U4E", "1yr", "No Upfront", "convertible", 0.72, 0.0),
    ReservedTerm("BPH4J8HBKS", "3yr", "No Upfront", "standard", 0.45, 0.0),
    ReservedTerm("CUZHX8X6JH", "1yr", "Partial Upfront", "convertible", 0.35, 0.35),
    ReservedTerm("HU7G6KETJZ", "1yr", "Partial Upfront", "standard", 0.30, 0.30),
    ReservedTerm("MZU6U2429S", "3yr", "All Upfront", "convertible", 0.0, 0.47),
    ReservedTerm("NQ3QZPMQV9", "3yr", "All Upfront", "standard", 0.0, 0.385),
    ReservedTerm("R5XV2EPZQZ", "3yr", "Partial Upfront", "convertible", 0.245, 0.245),
    ReservedTerm("VJWZNREJX2", "1yr", "All Upfront", "convertible", 0.0, 0.68),
    ReservedTerm("Z2E3P23VKM", "3yr", "No Upfront", "convertible", 0.52, 0.0),
)


class OsVariant(NamedTuple):
    """One operating-system / licence / pre-installed-software combination."""

    key: str
    os: str  # Operating System column
    license: str  # License Model
    software: str  # Pre Installed S/W
    operation: str
    label: str  # as written in on-demand PriceDescription
    ri_label: str  # as written in Reserved PriceDescription ("" = no Reserved terms)
    per_vcpu: float  # licence surcharge, USD per vCPU-hour
    flat: float  # licence surcharge, USD per hour


NO_LICENSE = "No License required"
OS_VARIANTS = (
    OsVariant("linux", "Linux", NO_LICENSE, "NA", "RunInstances", "Linux", "Linux/UNIX", 0, 0),
    OsVariant("linux-sqlstd", "Linux", NO_LICENSE, "SQL Std", "RunInstances:0004",
              "Linux with SQL Std", "Linux with SQL Server Standard", 0.12, 0),
    OsVariant("linux-sqlweb", "Linux", NO_LICENSE, "SQL Web", "RunInstances:0200",
              "Linux with SQL Web", "Linux with SQL Server Web", 0.012, 0),
    OsVariant("linux-sqlent", "Linux", NO_LICENSE, "SQL Ent", "RunInstances:0100",
              "Linux with SQL Ent", "Linux with SQL Server Enterprise", 0.375, 0),
    OsVariant("windows", "Windows", NO_LICENSE, "NA", "RunInstances:0002", "Windows", "Windows",
              0.046, 0),
    OsVariant("windows-sqlstd", "Windows", NO_LICENSE, "SQL Std", "RunInstances:0006",
              "Windows with SQL Std", "Windows with SQL Server Standard", 0.166, 0),
    OsVariant("windows-sqlweb", "Windows", NO_LICENSE, "SQL Web", "RunInstances:0202",
              "Windows with SQL Web", "Windows with SQL Server Web", 0.058, 0),
    OsVariant("windows-sqlent", "Windows", NO_LICENSE, "SQL Ent", "RunInstances:0102",
              "Windows with SQL Ent", "Windows with SQL Server Enterprise", 0.421, 0),
    OsVariant("windows-byol", "Windows", "Bring your own license", "NA", "RunInstances:0800",
              "Windows BYOL", "", 0, 0),
    OsVariant("windows-nolicense", "Windows", "License Included - Infrastructure", "NA",
              "RunInstances:0002:box", "Windows without licenses", "", 0, 0),
    OsVariant("rhel", "RHEL", NO_LICENSE, "NA", "RunInstances:0010", "RHEL",
              "Red Hat Enterprise Linux", 0.0144, 0),
    OsVariant("rhel-sqlstd", "RHEL", NO_LICENSE, "SQL Std", "RunInstances:0014",
              "RHEL with SQL Std", "Red Hat Enterprise Linux with SQL Server Standard", 0.1344, 0),
    OsVariant("rhel-ha", "Red Hat Enterprise Linux with HA", NO_LICENSE, "NA",
              "RunInstances:1010", "RHEL with HA", "Red Hat Enterprise Linux with HA", 0.0279, 0),
    OsVariant("rhel-ha-sqlstd", "Red Hat Enterprise Linux with HA", NO_LICENSE, "SQL Std",
              "RunInstances:1014", "RHEL with HA and SQL Standard",
              "Red Hat Enterprise Linux with HA with SQL Server Standard", 0.1479, 0),
    OsVariant("suse", "SUSE", NO_LICENSE, "NA", "RunInstances:000g", "SUSE", "SUSE Linux", 0, 0.0625),
    OsVariant("ubuntu-pro", "Ubuntu Pro", NO_LICENSE, "NA", "RunInstances:0g00", "Ubuntu Pro",
              "", 0.00175, 0),
)  # fmt: skip
OS_BY_KEY = {v.key: v for v in OS_VARIANTS}
LINUX_FAMILY_KEYS = frozenset({"linux", "rhel", "rhel-ha", "suse", "ubuntu-pro"})  # run on Graviton

# (tenancy, capacity status): which products exist for an instance type in a location.
TENANCY_CAPACITY = (
    ("Shared", "Used"),
    ("Shared", "UnusedCapacityReservation"),
    ("Shared", "AllocatedCapacityReservation"),
    ("Dedicated", "Used"),
    ("Dedicated", "UnusedCapacityReservation"),
    ("Host", "Used"),
)
_USAGE_TOKEN = {
    ("Shared", "Used"): "BoxUsage",
    ("Shared", "UnusedCapacityReservation"): "UnusedBox",
    ("Shared", "AllocatedCapacityReservation"): "Reservation",
    ("Dedicated", "Used"): "DedicatedUsage",
    ("Dedicated", "UnusedCapacityReservation"): "UnusedDed",
    ("Host", "Used"): "HostBoxUsage",
}


# ---------------------------------------------------------------------------------------------
# Serialization


def quote(value: str) -> str:
    """AWS CSV quoting: non-empty fields in double quotes (inner quotes doubled), empty bare."""
    if not value:
        return ""
    return '"' + value.replace('"', '""') + '"'


def csv_line(fields: Iterable[str]) -> str:
    return ",".join(quote(f) for f in fields) + "\n"


def header_lines(publication_date: str = PUBLICATION_DATE, version: str = VERSION) -> str:
    preamble = (
        ("FormatVersion", "v1.0"),
        ("Disclaimer", DISCLAIMER),
        ("Publication Date", publication_date),
        ("Version", version),
        ("OfferCode", "AmazonEC2"),
    )
    return "".join(csv_line(p) for p in preamble) + csv_line(COLUMNS)


def fmt_price(usd: float) -> str:
    """PricePerUnit: ten decimals."""
    return f"{usd:.10f}"


def fmt_description_price(usd: float) -> str:
    """The price inside a PriceDescription: trailing zeros dropped, "$0.00" for zero."""
    if usd == 0:
        return "$0.00"
    return "$" + f"{usd:.10f}".rstrip("0").rstrip(".")


def product_fields(attrs: Mapping[str, str]) -> str:
    """The 76 product columns (16..91) of one SKU, already quoted and comma-joined."""
    return ",".join(quote(attrs.get(col, "")) for col in PRODUCT_COLUMNS)


def reserved_prices(on_demand: float, term: ReservedTerm) -> tuple[float, int | None]:
    """(hourly rate, upfront fee or None) for one Reserved term, derived from the on-demand rate."""
    hourly = round(on_demand * term.hourly_factor, 5)
    if term.purchase == "No Upfront":
        return hourly, None
    return hourly, round(on_demand * HOURS[term.lease] * term.upfront_factor)


def sku_lines(
    sku: str,
    tail: str,
    on_demand_price: float,
    on_demand_description: str,
    ri_label: str = "",
    instance_type: str = "",
) -> list[str]:
    """All CSV lines of one SKU, ordered by OfferTermCode (hourly rate before its upfront fee).

    `tail` is `product_fields(...)`. With `ri_label` set, the SKU also gets the 12 Reserved terms,
    priced from the on-demand rate.
    """
    od = (
        f'"{sku}","{ON_DEMAND_TERM}","{sku}.{ON_DEMAND_TERM}.{HOURLY_RATE}","OnDemand",'
        f'{quote(on_demand_description)},"{ON_DEMAND_EFFECTIVE_DATE}","0","Inf","Hrs",'
        f'"{fmt_price(on_demand_price)}","USD",,,,,{tail}\n'
    )
    if not ri_label:
        return [od]
    applied = quote(f"{ri_label} (Amazon VPC), {instance_type} reserved instance applied")
    applied_free = quote(f"USD 0.0 per {ri_label} (Amazon VPC), {instance_type} reserved instance applied")
    lines = []
    for term in RESERVED_TERMS:  # already in OfferTermCode order
        if od is not None and term.code > ON_DEMAND_TERM:
            lines.append(od)
            od = None
        hourly, upfront = reserved_prices(on_demand_price, term)
        suffix = f'"USD",,"{term.lease}","{term.purchase}","{term.offering_class}",{tail}\n'
        lines.append(
            f'"{sku}","{term.code}","{sku}.{term.code}.{HOURLY_RATE}","Reserved",'
            f'{applied if hourly else applied_free},"{RESERVED_EFFECTIVE_DATE}","0","Inf","Hrs",'
            f'"{fmt_price(hourly)}",{suffix}'
        )
        if upfront is not None:
            lines.append(
                f'"{sku}","{term.code}","{sku}.{term.code}.{UPFRONT_RATE}","Reserved","Upfront Fee",'
                f'"{RESERVED_EFFECTIVE_DATE}",,,"Quantity","{upfront}",{suffix}'
            )
    if od is not None:
        lines.append(od)
    return lines


def on_demand_description(
    price: float, variant: OsVariant, instance_type: str, tenancy: str, capacity: str, market: str
) -> str:
    p = fmt_description_price(price)
    if market == "CapacityBlock":
        return f"{p} per Capacity Block {variant.label} {instance_type} Instance Hour"
    if tenancy == "Host":
        return f"{p} per {variant.os} {instance_type} Dedicated Host Instance hour"
    if capacity == "AllocatedCapacityReservation":
        dedicated = "Dedicated " if tenancy == "Dedicated" else ""
        return f"{p} per {dedicated}Reservation {variant.label} {instance_type} Instance Hour"
    if capacity == "UnusedCapacityReservation":
        dedicated = "Dedicated " if tenancy == "Dedicated" else ""
        return f"{p} per {dedicated}Unused Reservation {variant.label} {instance_type} Instance Hour"
    kind = "Dedicated" if tenancy == "Dedicated" else "On Demand"
    return f"{p} per {kind} {variant.label} {instance_type} Instance Hour"


def usage_type(prefix: str, tenancy: str, capacity: str, instance_type: str) -> str:
    return f"{prefix}{_USAGE_TOKEN[(tenancy, capacity)]}:{instance_type}"


def normalization_size_factor(size: str, vcpu: int) -> str:
    """Reserved-instance size factor: 8 per "xlarge" (0.25 for nano ... 4 for large)."""
    named = {"nano": 0.25, "micro": 0.5, "small": 1, "medium": 2, "large": 4}
    if size in named:
        return f"{named[size]:g}"
    return str(2 * vcpu)


# ---------------------------------------------------------------------------------------------
# Catalogue used by the generator: locations and instance types


class Location(NamedTuple):
    code: str  # Region Code
    name: str  # Location
    kind: str  # Location Type
    prefix: str  # usageType prefix
    multiplier: float  # price relative to us-east-1


REGIONS = tuple(
    Location(code, name, "AWS Region", prefix, mult)
    for code, name, prefix, mult in (
        ("us-east-1", "US East (N. Virginia)", "", 1.0),
        ("us-east-2", "US East (Ohio)", "USE2-", 1.0),
        ("us-west-1", "US West (N. California)", "USW1-", 1.17),
        ("us-west-2", "US West (Oregon)", "USW2-", 1.0),
        ("af-south-1", "Africa (Cape Town)", "AFS1-", 1.19),
        ("ap-east-1", "Asia Pacific (Hong Kong)", "APE1-", 1.26),
        ("ap-south-1", "Asia Pacific (Mumbai)", "APS3-", 1.05),
        ("ap-south-2", "Asia Pacific (Hyderabad)", "APS5-", 1.05),
        ("ap-northeast-1", "Asia Pacific (Tokyo)", "APN1-", 1.24),
        ("ap-northeast-2", "Asia Pacific (Seoul)", "APN2-", 1.2),
        ("ap-northeast-3", "Asia Pacific (Osaka)", "APN3-", 1.24),
        ("ap-southeast-1", "Asia Pacific (Singapore)", "APS1-", 1.2),
        ("ap-southeast-2", "Asia Pacific (Sydney)", "APS2-", 1.2),
        ("ap-southeast-3", "Asia Pacific (Jakarta)", "APS4-", 1.2),
        ("ap-southeast-4", "Asia Pacific (Melbourne)", "APS6-", 1.2),
        ("ap-southeast-5", "Asia Pacific (Malaysia)", "APS7-", 1.12),
        ("ca-central-1", "Canada (Central)", "CAN1-", 1.11),
        ("ca-west-1", "Canada West (Calgary)", "CAW1-", 1.11),
        ("eu-central-1", "EU (Frankfurt)", "EUC1-", 1.2),
        ("eu-central-2", "EU (Zurich)", "EUC2-", 1.31),
        ("eu-west-1", "EU (Ireland)", "EU-", 1.12),
        ("eu-west-2", "EU (London)", "EUW2-", 1.17),
        ("eu-west-3", "EU (Paris)", "EUW3-", 1.17),
        ("eu-north-1", "EU (Stockholm)", "EUN1-", 1.06),
        ("eu-south-1", "EU (Milan)", "EUS1-", 1.17),
        ("eu-south-2", "EU (Spain)", "EUS2-", 1.12),
        ("il-central-1", "Israel (Tel Aviv)", "ILC1-", 1.15),
        ("me-central-1", "Middle East (UAE)", "MEC1-", 1.22),
        ("me-south-1", "Middle East (Bahrain)", "MES1-", 1.22),
        ("sa-east-1", "South America (Sao Paulo)", "SAE1-", 1.59),
        ("us-gov-west-1", "AWS GovCloud (US-West)", "UGW1-", 1.26),
        ("us-gov-east-1", "AWS GovCloud (US-East)", "UGE1-", 1.26),
    )
)
LOCAL_ZONES = tuple(
    Location(code, name, "AWS Local Zone", prefix, mult)
    for code, name, prefix, mult in (
        ("us-east-1-nyc-1", "US East (New York City)", "NYC1-", 1.2),
        ("us-east-1-bos-1", "US East (Boston)", "BOS1-", 1.2),
        ("us-east-1-mia-1", "US East (Miami)", "MIA1-", 1.2),
        ("us-east-1-dfw-1", "US East (Dallas)", "DFW1-", 1.18),
        ("us-west-2-lax-1", "US West (Los Angeles)", "USW2-LAX1-", 1.2),
        ("us-west-2-phx-1", "US West (Phoenix)", "PHX1-", 1.18),
        ("us-west-2-den-1", "US West (Denver)", "DEN1-", 1.2),
        ("us-west-2-las-1", "US West (Las Vegas)", "LAS1-", 1.2),
    )
)
LOCAL_ZONE_FAMILIES = frozenset({"c5", "c6i", "c7i", "m5", "m6i", "m7i", "r5", "r6i", "t3", "g4dn"})

INTEL = ("Yes", "Yes", "Yes", "Intel AVX; Intel AVX2; Intel AVX512; Intel Turbo")
INTEL_AMX = ("Yes", "Yes", "Yes", "Intel AVX; Intel AVX2; Intel AVX512; Intel Turbo; Intel AMX")
AMD = ("No", "No", "No", "AMD Turbo; AVX; AVX2")
GRAVITON = ("No", "No", "No", "")


class InstanceType(NamedTuple):
    name: str
    family: str
    label: str  # Instance Family
    vcpu: int
    memory_gib: float
    processor: str
    clock: str
    storage: str
    network: str
    ebs: str  # Dedicated EBS Throughput
    gpu: str  # "" for none
    gpu_memory: str  # "NA" for none
    cpu_flags: tuple[str, str, str, str]  # AVX2, AVX, Turbo, Processor Features
    price: float  # Linux on-demand, us-east-1
    graviton: bool
    has_reserved: bool
    capacity_blocks: bool
    gpu_regions: int  # 0 = everywhere it is offered; else only in the first N regions


# (family, Instance Family, processor, clock, cpu flags, USD per vCPU-h, GiB per vCPU, storage,
#  largest size in vCPUs, metal, graviton)
_CPU_FAMILIES = (
    ("m5", "General purpose", "Intel Xeon Platinum 8175", "3.1 GHz", INTEL, 0.048, 4, "", 96, True),
    ("m5d", "General purpose", "Intel Xeon Platinum 8175", "3.1 GHz", INTEL, 0.0565, 4, "nvme", 96, True),
    ("m6i", "General purpose", "Intel Xeon 8375C (Ice Lake)", "3.5 GHz", INTEL, 0.048, 4, "", 128, True),
    ("m6id", "General purpose", "Intel Xeon 8375C (Ice Lake)", "3.5 GHz", INTEL, 0.0593, 4, "nvme", 128, True),
    ("m6a", "General purpose", "AMD EPYC 7R13 Processor", "3.6 GHz", AMD, 0.0432, 4, "", 192, True),
    ("m6g", "General purpose", "AWS Graviton2 Processor", "2.5 GHz", GRAVITON, 0.0385, 4, "", 64, True),
    ("m7i", "General purpose", "Intel Xeon Scalable (Sapphire Rapids)", "3.2 GHz", INTEL_AMX, 0.0504, 4, "", 192, True),
    ("m7i-flex", "General purpose", "Intel Xeon Scalable (Sapphire Rapids)", "3.2 GHz", INTEL_AMX, 0.0479, 4, "", 64, False),
    ("m7a", "General purpose", "AMD EPYC 9R14 Processor", "3.7 GHz", AMD, 0.05796, 4, "", 192, True),
    ("m7g", "General purpose", "AWS Graviton3 Processor", "2.6 GHz", GRAVITON, 0.0408, 4, "", 64, True),
    ("m8g", "General purpose", "AWS Graviton4 Processor", "2.8 GHz", GRAVITON, 0.04488, 4, "", 192, True),
    ("m8i", "General purpose", "Intel Xeon 6 (Granite Rapids)", "3.9 GHz", INTEL_AMX, 0.0529, 4, "", 384, True),
    ("c5", "Compute optimized", "Intel Xeon Platinum 8124M", "3.4 GHz", INTEL, 0.0425, 2, "", 96, True),
    ("c5d", "Compute optimized", "Intel Xeon Platinum 8124M", "3.4 GHz", INTEL, 0.048, 2, "nvme", 96, True),
    ("c6i", "Compute optimized", "Intel Xeon 8375C (Ice Lake)", "3.5 GHz", INTEL, 0.0425, 2, "", 128, True),
    ("c6id", "Compute optimized", "Intel Xeon 8375C (Ice Lake)", "3.5 GHz", INTEL, 0.0504, 2, "nvme", 128, True),
    ("c6a", "Compute optimized", "AMD EPYC 7R13 Processor", "3.6 GHz", AMD, 0.0383, 2, "", 192, True),
    ("c6g", "Compute optimized", "AWS Graviton2 Processor", "2.5 GHz", GRAVITON, 0.034, 2, "", 64, True),
    ("c6gn", "Compute optimized", "AWS Graviton2 Processor", "2.5 GHz", GRAVITON, 0.0432, 2, "", 64, False),
    ("c7i", "Compute optimized", "Intel Xeon Scalable (Sapphire Rapids)", "3.2 GHz", INTEL_AMX, 0.044625, 2, "", 192, True),
    ("c7a", "Compute optimized", "AMD EPYC 9R14 Processor", "3.7 GHz", AMD, 0.05131, 2, "", 192, True),
    ("c7g", "Compute optimized", "AWS Graviton3 Processor", "2.6 GHz", GRAVITON, 0.03625, 2, "", 64, True),
    ("c8g", "Compute optimized", "AWS Graviton4 Processor", "2.8 GHz", GRAVITON, 0.03988, 2, "", 192, True),
    ("r5", "Memory optimized", "Intel Xeon Platinum 8175", "3.1 GHz", INTEL, 0.063, 8, "", 96, True),
    ("r5d", "Memory optimized", "Intel Xeon Platinum 8175", "3.1 GHz", INTEL, 0.072, 8, "nvme", 96, True),
    ("r6i", "Memory optimized", "Intel Xeon 8375C (Ice Lake)", "3.5 GHz", INTEL, 0.063, 8, "", 128, True),
    ("r6a", "Memory optimized", "AMD EPYC 7R13 Processor", "3.6 GHz", AMD, 0.0567, 8, "", 192, True),
    ("r6g", "Memory optimized", "AWS Graviton2 Processor", "2.5 GHz", GRAVITON, 0.0504, 8, "", 64, True),
    ("r7i", "Memory optimized", "Intel Xeon Scalable (Sapphire Rapids)", "3.2 GHz", INTEL_AMX, 0.06615, 8, "", 192, True),
    ("r7a", "Memory optimized", "AMD EPYC 9R14 Processor", "3.7 GHz", AMD, 0.07608, 8, "", 192, True),
    ("r7g", "Memory optimized", "AWS Graviton3 Processor", "2.6 GHz", GRAVITON, 0.05355, 8, "", 64, True),
    ("r8g", "Memory optimized", "AWS Graviton4 Processor", "2.8 GHz", GRAVITON, 0.05891, 8, "", 192, True),
    ("x2idn", "Memory optimized", "Intel Xeon 8375C (Ice Lake)", "3.5 GHz", INTEL, 0.1042, 16, "nvme", 128, True),
    ("z1d", "Memory optimized", "Intel Xeon Platinum 8151", "4 GHz", INTEL, 0.093, 8, "nvme", 48, True),
    ("i3en", "Storage optimized", "Intel Xeon Platinum 8175", "3.1 GHz", INTEL, 0.113, 8, "nvme", 96, True),
    ("i4i", "Storage optimized", "Intel Xeon 8375C (Ice Lake)", "3.5 GHz", INTEL, 0.0858, 8, "nvme", 128, True),
    ("i4g", "Storage optimized", "AWS Graviton2 Processor", "2.5 GHz", GRAVITON, 0.0772, 8, "nvme", 64, False),
    ("d3", "Storage optimized", "Intel Xeon Platinum 8259 (Cascade Lake)", "3.1 GHz", INTEL, 0.1248, 8, "hdd", 32, False),
)  # fmt: skip
_SIZES = ((2, "large"), (4, "xlarge"), (8, "2xlarge"), (16, "4xlarge"), (32, "8xlarge"),
          (48, "12xlarge"), (64, "16xlarge"), (96, "24xlarge"), (128, "32xlarge"),
          (192, "48xlarge"), (384, "96xlarge"))  # fmt: skip
# Burstable: (family, processor, clock, flags, graviton, USD/h of the 2-vCPU "micro").
_BURSTABLE = (
    ("t3", "Intel Skylake E5 2686 v5", "3.1 GHz", INTEL, False, 0.0104),
    ("t3a", "AMD EPYC 7571", "2.5 GHz", AMD, False, 0.0094),
    ("t4g", "AWS Graviton2 Processor", "2.5 GHz", GRAVITON, True, 0.0084),
)
_BURST_SIZES = (("nano", 2, 0.5, 0.5), ("micro", 2, 1, 1), ("small", 2, 2, 2), ("medium", 2, 4, 4),
                ("large", 2, 8, 8), ("xlarge", 4, 16, 16), ("2xlarge", 8, 32, 32))  # fmt: skip

# GPU and ML-accelerator types: (name, vcpu, GiB, GPU, GPU Memory, USD/h us-east-1, storage,
# network, EBS throughput). Family-wide facts follow in _GPU_FAMILIES.
_GPU_TYPES = (
    ("g4dn.xlarge", 4, 16, "1", "16 GB", 0.526, "125 GB NVMe SSD", "Up to 25 Gigabit", "3500 Mbps"),
    ("g4dn.2xlarge", 8, 32, "1", "16 GB", 0.752, "225 GB NVMe SSD", "Up to 25 Gigabit", "3500 Mbps"),
    ("g4dn.4xlarge", 16, 64, "1", "16 GB", 1.204, "225 GB NVMe SSD", "Up to 25 Gigabit", "4750 Mbps"),
    ("g4dn.8xlarge", 32, 128, "1", "16 GB", 2.176, "900 GB NVMe SSD", "50 Gigabit", "9500 Mbps"),
    ("g4dn.12xlarge", 48, 192, "4", "64 GB", 3.912, "900 GB NVMe SSD", "50 Gigabit", "9500 Mbps"),
    ("g4dn.16xlarge", 64, 256, "1", "16 GB", 4.352, "900 GB NVMe SSD", "50 Gigabit", "9500 Mbps"),
    ("g4dn.metal", 96, 384, "8", "128 GB", 7.824, "2 x 900 NVMe SSD", "100 Gigabit", "19000 Mbps"),
    ("g5.xlarge", 4, 16, "1", "24 GB", 1.006, "1 x 250 GB NVMe SSD", "Up to 10 Gigabit", "Up to 3500 Mbps"),
    ("g5.2xlarge", 8, 32, "1", "24 GB", 1.212, "1 x 450 GB NVMe SSD", "Up to 10 Gigabit", "Up to 3500 Mbps"),
    ("g5.4xlarge", 16, 64, "1", "24 GB", 1.624, "1 x 600 GB NVMe SSD", "Up to 25 Gigabit", "8000 Mbps"),
    ("g5.8xlarge", 32, 128, "1", "24 GB", 2.448, "1 x 900 GB NVMe SSD", "25 Gigabit", "16000 Mbps"),
    ("g5.12xlarge", 48, 192, "4", "96 GB", 5.672, "1 x 3800 GB NVMe SSD", "40 Gigabit", "16000 Mbps"),
    ("g5.16xlarge", 64, 256, "1", "24 GB", 4.096, "1 x 1900 GB NVMe SSD", "25 Gigabit", "16000 Mbps"),
    ("g5.24xlarge", 96, 384, "4", "96 GB", 8.144, "1 x 3800 GB NVMe SSD", "50 Gigabit", "19000 Mbps"),
    ("g5.48xlarge", 192, 768, "8", "192 GB", 16.288, "2 x 3800 GB NVMe SSD", "100 Gigabit", "19000 Mbps"),
    ("g6.xlarge", 4, 16, "1", "24 GB", 0.8048, "1 x 250 GB NVMe SSD", "Up to 10 Gigabit", "Up to 5000 Mbps"),
    ("g6.2xlarge", 8, 32, "1", "24 GB", 0.9776, "1 x 450 GB NVMe SSD", "Up to 10 Gigabit", "Up to 5000 Mbps"),
    ("g6.4xlarge", 16, 64, "1", "24 GB", 1.3232, "1 x 600 GB NVMe SSD", "Up to 25 Gigabit", "8000 Mbps"),
    ("g6.12xlarge", 48, 192, "4", "96 GB", 4.6016, "4 x 940 GB NVMe SSD", "40 Gigabit", "20000 Mbps"),
    ("g6.48xlarge", 192, 768, "8", "192 GB", 13.3504, "8 x 940 GB NVMe SSD", "100 Gigabit", "60000 Mbps"),
    ("g6e.xlarge", 4, 32, "1", "48 GB", 1.861, "1 x 250 GB NVMe SSD", "Up to 20 Gigabit", "Up to 5000 Mbps"),
    ("g6e.2xlarge", 8, 64, "1", "48 GB", 2.24208, "1 x 450 GB NVMe SSD", "Up to 20 Gigabit", "Up to 5000 Mbps"),
    ("g6e.12xlarge", 48, 384, "4", "192 GB", 10.49264, "2 x 1900 GB NVMe SSD", "100 Gigabit", "20000 Mbps"),
    ("g6e.48xlarge", 192, 1536, "8", "384 GB", 30.13118, "4 x 1900 GB NVMe SSD", "400 Gigabit", "60000 Mbps"),
    ("p3.2xlarge", 8, 61, "1", "16 GB", 3.06, "EBS only", "Up to 10 Gigabit", "1750 Mbps"),
    ("p3.8xlarge", 32, 244, "4", "64 GB", 12.24, "EBS only", "10 Gigabit", "7000 Mbps"),
    ("p3.16xlarge", 64, 488, "8", "128 GB", 24.48, "EBS only", "25 Gigabit", "14000 Mbps"),
    ("p4d.24xlarge", 96, 1152, "8", "320 GB HBM2", 21.957642, "8 x 1000 SSD", "400 Gigabit", "19000 Mbps"),
    ("p4de.24xlarge", 96, 1152, "8", "640 GB HBM2e", 27.447, "8 x 1000 SSD", "400 Gigabit", "19000 Mbps"),
    ("p5.4xlarge", 16, 256, "1", "80 GB HBM3", 6.88, "1 x 3840 GB SSD", "100 Gigabit", "10 Gbps"),
    ("p5.48xlarge", 192, 2048, "8", "640 GB HBM3", 55.04, "8 x 3840 GB SSD", "3200 Gigabit", "80 Gbps"),
    ("p5en.48xlarge", 192, 2048, "8", "1128 GB HBM3e", 63.296, "8 x 3840 GB SSD", "3200 Gigabit", "100 Gbps"),
    ("p6-b200.48xlarge", 192, 2048, "8", "1440 GB HBM3e", 113.9328, "8 x 3840 GB NVMe SSD", "3200 Gigabit", "100 Gbps"),
    ("g5g.xlarge", 4, 8, "1", "16 GB", 0.42, "EBS only", "Up to 10 Gigabit", "Up to 3500 Mbps"),
    ("g5g.16xlarge", 64, 128, "2", "32 GB", 2.744, "EBS only", "25 Gigabit", "19000 Mbps"),
    ("inf2.xlarge", 4, 16, "1", "32 GB", 0.7582, "EBS only", "Up to 15 Gigabit", "Up to 10 Gbps"),
    ("inf2.48xlarge", 192, 768, "12", "384 GB", 12.98127, "EBS only", "100 Gigabit", "60 Gbps"),
    ("trn1.2xlarge", 8, 32, "1", "32 GB", 1.34375, "1 x 475 NVMe SSD", "Up to 12500 Megabit", "Up to 20 Gbps"),
    ("trn1.32xlarge", 128, 512, "16", "512 GB", 21.5, "4 x 1900 NVMe SSD", "800 Gigabit", "Up to 80 Gbps"),
)  # fmt: skip
# family: (Instance Family, processor, clock, flags, Reserved offered, Capacity Blocks, regions)
_GPU_FAMILIES = {
    "g4dn": ("GPU instance", "Intel Xeon Family", "2.5 GHz", INTEL, True, False, 0),
    "g5": ("GPU instance", "AMD EPYC 7R32", "2.8 GHz", AMD, True, False, 0),
    "g6": ("GPU instance", "AMD EPYC 7R13 Processor", "2.6 GHz", AMD, True, False, 14),
    "g6e": ("GPU instance", "AMD EPYC 7R13 Processor", "2.6 GHz", AMD, True, False, 10),
    "p3": ("GPU instance", "Intel Xeon E5-2686 v4 (Broadwell)", "2.3 GHz", INTEL, True, False, 12),
    "p4d": ("GPU instance", "Intel Xeon Platinum 8275L", "3 GHz", INTEL, True, True, 12),
    "p4de": ("GPU instance", "Intel Xeon Platinum 8275L", "3 GHz", INTEL, False, True, 4),
    "p5": ("GPU instance", "AMD EPYC 7R13 Processor", "2.95 GHz", AMD, False, True, 10),
    "p5en": ("GPU instance", "Intel Xeon Scalable (Sapphire Rapids)", "3.2 GHz", INTEL_AMX, False, True, 4),
    "p6-b200": ("GPU instance", "Intel Xeon Scalable (Emerald Rapids)", "3.2 GHz", INTEL_AMX, False, True, 4),
    "g5g": ("GPU instance", "AWS Graviton2 Processor", "2.5 GHz", GRAVITON, True, False, 8),
    "inf2": ("Machine Learning ASIC Instances", "AMD EPYC 7R13 Processor", "2.95 GHz", AMD, True, False, 14),
    "trn1": ("Machine Learning ASIC Instances", "Intel Xeon Scalable (Icelake)", "Up to 3.5 GHz", INTEL, True, True, 6),
}  # fmt: skip


def _network(vcpu: int) -> tuple[str, str]:
    if vcpu <= 16:
        return "Up to 12500 Megabit", "Up to 10000 Mbps"
    for limit, net, ebs in ((32, "12500", "10000"), (48, "18750", "15000"), (64, "25000", "20000"),
                            (96, "37500", "30000"), (128, "50000", "40000")):  # fmt: skip
        if vcpu <= limit:
            return f"{net} Megabit", f"{ebs} Mbps"
    return "75000 Megabit", "60000 Mbps"


def _storage(kind: str, vcpu: int) -> str:
    if kind == "nvme":
        return f"{max(1, vcpu // 32)} x {min(3800, 59 * vcpu)} NVMe SSD"
    if kind == "hdd":
        return f"{max(1, vcpu // 4)} x 14000 HDD"
    return "EBS only"


def instance_catalogue() -> list[InstanceType]:
    out: list[InstanceType] = []
    for fam, label, cpu, clock, flags, per_vcpu, gib, storage, largest, metal, in _CPU_FAMILIES:
        graviton = flags is GRAVITON
        sizes = [(v, s) for v, s in _SIZES if v <= largest]
        if graviton:
            sizes.insert(0, (1, "medium"))
        if metal:
            sizes.append((largest, "metal"))
        for vcpu, size in sizes:
            net, ebs = _network(vcpu)
            out.append(InstanceType(
                f"{fam}.{size}", fam, label, vcpu, vcpu * gib, cpu, clock, _storage(storage, vcpu),
                net, ebs, "", "NA", flags, round(per_vcpu * vcpu, 5), graviton, True, False, 0,
            ))  # fmt: skip
    for fam, cpu, clock, flags, graviton, micro_price in _BURSTABLE:
        for size, vcpu, gib, factor in _BURST_SIZES:
            out.append(InstanceType(
                f"{fam}.{size}", fam, "General purpose", vcpu, gib, cpu, clock, "EBS only",
                "Up to 5 Gigabit", "Up to 2085 Mbps", "", "NA", flags, round(micro_price * factor, 5),
                graviton, True, False, 0,
            ))  # fmt: skip
    for name, vcpu, gib, gpu, gpu_mem, price, storage, net, ebs in _GPU_TYPES:
        fam = name.split(".")[0]
        label, cpu, clock, flags, reserved, blocks, regions = _GPU_FAMILIES[fam]
        out.append(InstanceType(
            name, fam, label, vcpu, gib, cpu, clock, storage, net, ebs, gpu, gpu_mem, flags, price,
            flags is GRAVITON, reserved, blocks, regions,
        ))  # fmt: skip
    return out


def _fmt_gib(gib: float) -> str:
    return f"{gib:g} GiB"


# ---------------------------------------------------------------------------------------------
# Generator


class GenerateStats(NamedTuple):
    rows: int
    skus: int
    gpu_rows: int
    size_bytes: int


_SKU_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SKU_SPACE = 36**16
_SKU_PAIRS = [a + b for a in _SKU_ALPHABET for b in _SKU_ALPHABET]


def _encode_sku(n: int) -> str:
    """16 base-36 digits, two at a time."""
    pairs = []
    for _ in range(8):
        n, r = divmod(n, 1296)
        pairs.append(_SKU_PAIRS[r])
    return "".join(reversed(pairs))


class _SkuSequence:
    """Strictly increasing, random-looking 16-character SKUs spread over the whole key space."""

    def __init__(self, rng: random.Random):
        self._rng = rng
        self._current = 0

    def next(self, skus_left_estimate: float) -> str:
        room = _SKU_SPACE - self._current
        gap = room / (skus_left_estimate + 1)
        # Never jump more than half the remaining room, so the sequence cannot run out of keys.
        self._current += 1 + self._rng.randrange(max(1, int(min(2 * gap, room / 2))))
        return _encode_sku(self._current)


def _hash_percent(*parts: str) -> int:
    return zlib.crc32("|".join(parts).encode()) % 100


def _offered(location: Location, region_index: int, itype: InstanceType) -> bool:
    """Deterministic availability of an instance type in a location."""
    if location.kind == "AWS Local Zone":
        return itype.family in LOCAL_ZONE_FAMILIES and _hash_percent(location.code, itype.name) < 60
    if itype.gpu_regions and region_index >= itype.gpu_regions:
        return False
    share = 92 if itype.family in ("m5", "c5", "r5", "t3", "m6i", "c6i", "r6i", "g4dn") else 75
    return _hash_percent(location.code, itype.name) < share


def generate(path: str, rows: int, seed: int = 0) -> GenerateStats:
    """Write an all-region-sized AWS EC2 price-list CSV with exactly `rows` price rows."""
    if rows < 0:
        raise ValueError("rows must be >= 0")
    rng = random.Random(seed)
    types = instance_catalogue()
    locations = REGIONS + LOCAL_ZONES
    offered = [[_offered(loc, i, t) for t in types] for i, loc in enumerate(locations)]
    type_columns = [_type_columns(t) for t in types]
    n_variants = len(OS_VARIANTS) * len(TENANCY_CAPACITY) + 1  # +1: the Capacity Block product
    space = len(locations) * len(types) * n_variants
    stride = _coprime_stride(space, rng)
    skus = _SkuSequence(rng)

    written = sku_count = gpu_rows = size = 0
    rows_per_sku = 4.0  # running estimate, drives the SKU spacing
    pass_offset = rng.randrange(space)
    i = 0
    buffer: list[str] = []
    with open(path, "w", encoding="utf-8", newline="") as out:
        head = header_lines()
        out.write(head)
        size += len(head.encode())
        while written < rows:
            idx = (stride * i + pass_offset) % space
            i += 1
            if i % space == 0:  # every product visited: start another pass (repeats allowed)
                pass_offset = rng.randrange(space)
            loc_i, rest = divmod(idx, len(types) * n_variants)
            type_i, variant_i = divmod(rest, n_variants)
            if not offered[loc_i][type_i]:
                continue
            product = _product(locations[loc_i], types[type_i], variant_i, rows - written)
            if product is None:
                continue
            sku = skus.next((rows - written) / rows_per_sku)
            lines = _product_lines(sku, product, types[type_i], type_columns[type_i], rng)
            buffer.extend(lines)
            written += len(lines)
            sku_count += 1
            rows_per_sku = written / sku_count
            if types[type_i].gpu:
                gpu_rows += len(lines)
            if len(buffer) >= 20000:
                chunk = "".join(buffer)
                out.write(chunk)
                size += len(chunk.encode())
                buffer.clear()
        chunk = "".join(buffer)
        out.write(chunk)
        size += len(chunk.encode())
    return GenerateStats(written, sku_count, gpu_rows, size)


def _coprime_stride(space: int, rng: random.Random) -> int:
    stride = rng.randrange(space // 3, space) | 1
    while gcd(stride, space) != 1:
        stride += 2
    return stride


class _Product(NamedTuple):
    location: Location
    variant: OsVariant
    tenancy: str
    capacity: str
    market: str
    reserved: bool


def _product(loc: Location, t: InstanceType, variant_i: int, rows_left: int) -> _Product | None:
    """Decode a variant index into a product, or None where that product does not exist."""
    local_zone = loc.kind == "AWS Local Zone"
    if variant_i == len(OS_VARIANTS) * len(TENANCY_CAPACITY):
        if not t.capacity_blocks or local_zone:
            return None
        return _Product(loc, OS_BY_KEY["linux"], "Shared", "Used", "CapacityBlock", False)
    os_i, tc_i = divmod(variant_i, len(TENANCY_CAPACITY))
    variant = OS_VARIANTS[os_i]
    tenancy, capacity = TENANCY_CAPACITY[tc_i]
    if t.graviton and variant.key not in LINUX_FAMILY_KEYS:
        return None
    if local_zone and (tenancy == "Host" or variant.software != "NA"):
        return None
    if variant.key == "windows-nolicense" and tenancy != "Shared":
        return None
    reserved = (
        capacity == "Used"
        and tenancy != "Host"
        and not local_zone
        and t.has_reserved
        and bool(variant.ri_label)
        and rows_left >= 20
    )
    return _Product(loc, variant, tenancy, capacity, "OnDemand", reserved)


class _TypeColumns(NamedTuple):
    """Pre-quoted column runs that depend only on the instance type."""

    spec: str  # columns 20-36: Instance Type .. Provisioned
    hardware: str  # columns 53-60: Dedicated EBS Throughput .. Instance
    cpu_flags: str  # columns 76-78: Intel AVX2/AVX/Turbo Available
    size_factor: str  # column 80
    features: str  # column 83


def _type_columns(t: InstanceType) -> _TypeColumns:
    avx2, avx, turbo, features = t.cpu_flags
    size = t.name.split(".", 1)[1]
    spec = (t.name, "Yes", t.label, str(t.vcpu), t.processor, t.clock, _fmt_gib(t.memory_gib),
            t.storage, t.network, "64-bit", "", "", "", "", "", "", "")  # fmt: skip
    enhanced = "No" if t.name.startswith("p4d") else "Yes"
    hardware = (t.ebs, "NA", "", enhanced, "", t.gpu, t.gpu_memory, "")
    return _TypeColumns(
        ",".join(quote(v) for v in spec),
        ",".join(quote(v) for v in hardware),
        ",".join(quote(v) for v in (avx2, avx, turbo)),
        quote(normalization_size_factor(size, t.vcpu)),
        quote(features),
    )


_EMPTY_14 = "," * 13  # columns 61-74, joined between their neighbours
_SERVICE = quote("Amazon Elastic Compute Cloud")


def _product_lines(
    sku: str, p: _Product, t: InstanceType, cols: _TypeColumns, rng: random.Random
) -> list[str]:
    family = "Compute Instance (bare metal)" if ".metal" in t.name else "Compute Instance"
    if p.market == "CapacityBlock":
        operation, usage = "RunInstances:CB", f"{p.location.prefix}BoxUsage:{t.name}"
    else:
        operation = p.variant.operation
        usage = usage_type(p.location.prefix, p.tenancy, p.capacity, t.name)
    instance_sku = "" if p.capacity == "Used" else _encode_sku(rng.randrange(_SKU_SPACE))
    tail = ",".join((
        quote(family), '"AmazonEC2"', quote(p.location.name), quote(p.location.kind), cols.spec,
        quote(p.tenancy), "", quote(p.variant.os), quote(p.variant.license), ",,,,,,",
        quote(usage), quote(operation), '"NA"', quote(p.capacity), '"false"', cols.hardware,
        _EMPTY_14, quote(instance_sku), cols.cpu_flags, quote(p.market), cols.size_factor, "",
        quote(p.variant.software), cols.features, "", quote(p.location.code), "", _SERVICE, ",,",
        '"true"',
    ))  # fmt: skip
    price = _on_demand_price(p, t)
    text = on_demand_description(price, p.variant, t.name, p.tenancy, p.capacity, p.market)
    ri_label = p.variant.ri_label if p.reserved else ""
    return sku_lines(sku, tail, price, text, ri_label, t.name)


def _on_demand_price(p: _Product, t: InstanceType) -> float:
    if p.market == "CapacityBlock" or p.tenancy == "Host":
        return 0.0
    if p.capacity == "AllocatedCapacityReservation":
        return 0.0
    base = t.price * p.location.multiplier
    if p.variant.key != "windows-nolicense":
        base += p.variant.per_vcpu * t.vcpu + p.variant.flat
    if p.tenancy == "Dedicated":
        base *= 1.1
    return round(base, 5)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="path of the CSV to write")
    parser.add_argument("--rows", type=int, default=2_000_000, help="price rows (default 2000000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    stats = generate(args.out, args.rows, args.seed)
    elapsed = time.perf_counter() - started
    print(
        f"wrote {stats.rows} rows ({stats.skus} SKUs, {stats.gpu_rows} GPU rows), "
        f"{stats.size_bytes / 1e6:.1f} MB in {elapsed:.1f} s -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
