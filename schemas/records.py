"""The records every layer passes on: what a parser yields, what validation and loading take.

`Offer` is the one place that lists an offer's columns: parsers build it, normalization fills
its USD columns, the pandera model (`schemas/offers.py`), the migration and the column docs
are checked against it by tests. Units: GB = 10^9 bytes, USD, hours as priced, UTC times.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import IO, Any, ClassVar

# What a parser leaves for the frame (scrapers.base.parse_page) to stamp: the provider, the source,
# the page's URL, its fetch time and the day it verifies. A record that reaches validation with
# these still in place was never stamped; the pandera models and the frame's tests catch it.
UNSTAMPED = ""
UNSTAMPED_AT = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Offer:
    """One rentable GPU configuration at one price, as a provider publishes it.

    Parsers fill what the provider states and leave `usd_per_hour`/`usd_per_gpu_hour` to
    normalization; `gpu_model` is None when the provider's GPU string maps to nothing (the
    offer is then rejected as `unknown_gpu`, never dropped). Normalization also sets
    `fx_rate_date`, the date of the exchange rate it converted a non-USD price with.
    """

    table: ClassVar[str] = "offers"

    provider: str = UNSTAMPED
    offer_id: str
    source: str = UNSTAMPED
    instance_type: str
    region: str
    market: str  # on_demand | spot
    tier: str | None = None
    gpu_name: str  # the provider's own GPU string, before mapping
    gpu_model: str | None  # canonical, from schemas/reference/gpu_models.csv
    gpu_count: float  # fractional for vGPU slices
    gpu_memory_gb: float | None = None  # per GPU device; None = the model's nameplate memory
    vcpus: float | None = None
    ram_gb: float | None = None
    price: float  # as quoted, in `currency` per `price_unit`
    price_unit: str  # instance_hour | gpu_hour
    currency: str
    availability: str  # available | unavailable | unknown
    available_count: int | None = None
    interconnect: str | None = None
    fabric: str | None = None
    fabric_gbps: float | None = None
    source_url: str = UNSTAMPED  # a page's URL; a parser sets it only for a record with its own
    scraped_at: datetime = UNSTAMPED_AT
    usd_per_hour: float | None = None
    usd_per_gpu_hour: float | None = None
    fx_rate_date: date | None = None  # the exchange rate's date; None for prices quoted in USD
    # Marketplace hosts price their own disk and bandwidth; None where the provider's terms apply.
    storage_usd_per_gb_month: float | None = None  # this offer's persistent disk, USD per GB-month
    egress_usd_per_gb: float | None = None  # download from the instance, USD per GB
    ingress_usd_per_gb: float | None = None  # upload to the instance, USD per GB
    price_excludes: str | None = None  # what the price leaves out, priced: "vcpu 0.003/h; ram 0.002/GB-h"

    def as_row(self) -> dict[str, Any]:
        return _row(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class InterruptionRate:
    """How often a spot instance is reclaimed, as a published band, with its savings."""

    table: ClassVar[str] = "interruption_rates"

    provider: str = UNSTAMPED
    region: str
    instance_type: str
    os: str
    source: str = UNSTAMPED
    interruption_band: str  # as published, e.g. "<5%"
    band_lower_pct: float
    band_upper_pct: float
    savings_pct: float | None
    source_url: str = UNSTAMPED
    scraped_at: datetime = UNSTAMPED_AT

    def as_row(self) -> dict[str, Any]:
        return _row(self)


@dataclass(frozen=True, slots=True)
class ExchangeRate:
    """What one unit of a currency is worth in USD on a date, as a reference-rate source states it."""

    table: ClassVar[str] = "exchange_rates"

    currency: str  # ISO 4217 code
    usd_per_unit: float
    rate_date: date  # the day the rate is for, as its publisher dates it
    source: str = UNSTAMPED
    source_url: str = UNSTAMPED
    scraped_at: datetime = UNSTAMPED_AT

    def as_row(self) -> dict[str, Any]:
        return _row(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScrapedStorageTerm:
    """A storage price as a machine-readable price list states it, for one region
    (pandera model `schemas.storage_terms.ScrapedStorageTerms`; the `storage_terms` view merges it
    with the reviewed row of the same provider and kind)."""

    table: ClassVar[str] = "scraped_storage_terms"

    provider: str = UNSTAMPED
    kind: str  # schemas.storage_terms.KINDS
    product: str
    region: str
    usd_per_gb_month: float | None = None  # None until normalization converts a non-USD original price
    original_currency: str
    original_price: float
    original_unit: str  # GB-month | GiB-month | ...
    max_size_gb: float | None = None
    read_throughput_mb_s: float | None = None
    source: str = UNSTAMPED
    source_url: str = UNSTAMPED
    scraped_at: datetime = UNSTAMPED_AT
    verified_on: str = UNSTAMPED  # YYYY-MM-DD, the scrape's day
    evidence: str  # 'columns: "the price list's line" <url>' segments
    notes: str | None = None

    def as_row(self) -> dict[str, Any]:
        return _row(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScrapedEgressTier:
    """One tier of an egress schedule as a machine-readable price list states it, for one region."""

    table: ClassVar[str] = "scraped_egress_terms"

    provider: str = UNSTAMPED
    scope: str  # schemas.egress_terms.SCOPES
    region: str
    tier: int  # 1, 2, ... in order of monthly volume
    from_gb: float
    to_gb: float | None = None  # None = unbounded
    usd_per_gb: float
    original_price: float
    original_unit: str  # GB | GiB
    free_allowance_gb_month: float | None = None
    source: str = UNSTAMPED
    source_url: str = UNSTAMPED
    scraped_at: datetime = UNSTAMPED_AT
    verified_on: str = UNSTAMPED
    evidence: str
    notes: str | None = None

    def as_row(self) -> dict[str, Any]:
        return _row(self)


@dataclass(frozen=True)
class Rejected:
    """A row that cannot be trusted: it goes to `rejected_rows` with its reasons, never silently away."""

    table: str
    reasons: tuple[str, ...]
    row: Mapping[str, Any]  # a dict; a collected one of plain JSON is its text (`RowText`)


def row_json(row: Mapping[str, Any]) -> str:
    """A rejected row as `rejected_rows.row_json` stores it: keys sorted, times in ISO form."""
    if isinstance(row, RowText):
        return row.text
    return json.dumps(row, sort_keys=True, default=_json_default)


def _json_default(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


class RowText(Mapping[str, Any]):
    """A rejected row held as the JSON text it will be stored as (`row_json`), decoded on reading.

    A marketplace's raw rows are wide (a Vast offer has about 70 fields): a rejected one costs
    about 10 KB as a dict and 2 KB as text. A refresh holds the rows it rejected while parsing
    this way until they are stored (`schemas.validate.collect`, for rows of plain JSON only, which
    read back as themselves); reading one (`row["offer_id"]`) decodes it.
    """

    __slots__ = ("text",)

    def __init__(self, row: Mapping[str, Any]):
        self.text = row_json(row)

    def _row(self) -> dict[str, Any]:
        decoded: dict[str, Any] = json.loads(self.text)
        return decoded

    def __getitem__(self, key: str) -> Any:
        return self._row()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._row())

    def __len__(self) -> int:
        return len(self._row())

    def __eq__(self, other: object) -> bool:
        return self._row() == (other._row() if isinstance(other, RowText) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RowText({self.text[:200]})"


@dataclass(frozen=True)
class Skipped:
    """Rows a parser set aside because they are not what the source collects (a CPU-only VM in a
    price list of every VM). Counted per reason into `scrape_runs.rows_skipped`, never stored and
    never rejected, so they do not bury real failures; `examples` names a few of them."""

    table: ClassVar[str] = "skipped"

    reason: str
    count: int
    examples: tuple[str, ...]
    source_url: str = UNSTAMPED  # the page that held them

    def as_row(self) -> dict[str, Any]:
        return {"reason": self.reason, "count": self.count, "examples": list(self.examples), "source_url": self.source_url}


Record = Offer | InterruptionRate | ExchangeRate | ScrapedStorageTerm | ScrapedEgressTier
ParseItem = Offer | InterruptionRate | ExchangeRate | ScrapedStorageTerm | ScrapedEgressTier | Rejected | Skipped
RECORD_TYPES: dict[str, type[Record]] = {
    Offer.table: Offer,
    InterruptionRate.table: InterruptionRate,
    ExchangeRate.table: ExchangeRate,
    ScrapedStorageTerm.table: ScrapedStorageTerm,
    ScrapedEgressTier.table: ScrapedEgressTier,
}


def record_columns(table: str) -> list[str]:
    """The columns of a table's record type, in declaration order."""
    return [f.name for f in fields(RECORD_TYPES[table])]


@dataclass(frozen=True)
class Page:
    """One response body as a parser sees it: where it came from and when."""

    url: str  # redacted: never carries a secret
    fetched_at: datetime  # UTC
    path: Path  # the body on disk (capture directory or temporary)

    def open(self) -> IO[bytes]:
        return self.path.open("rb")


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _row(record: Any) -> dict[str, Any]:
    """A record's columns as a dict. Shallow on purpose: every value is a scalar, and
    `dataclasses.asdict`'s deep copy was half the cost of validating a batch."""
    return {name: getattr(record, name) for name in _field_names(record.__class__)}


# The Python types a record field's annotation allows (bool is not a number here).
_ALLOWED = {"str": (str,), "float": (int, float), "int": (int,), "datetime": (datetime,), "date": (date,)}


def _field_types(cls: type) -> dict[str, tuple[tuple[type, ...], bool]]:
    hints = typing.get_type_hints(cls)
    out: dict[str, tuple[tuple[type, ...], bool]] = {}
    for f in fields(cls):
        args = typing.get_args(hints[f.name]) if isinstance(hints[f.name], types.UnionType) else (hints[f.name],)
        out[f.name] = (tuple(t for a in args if a is not type(None) for t in _ALLOWED[a.__name__]), type(None) in args)
    return out


_FIELD_TYPES = {table: _field_types(cls) for table, cls in RECORD_TYPES.items()}


def type_problems(record: Record) -> list[str]:
    """Fields whose value is not of the annotated type: validation coerces (the int 0 would become
    the region "0"), so a parser that read the wrong JSON type must be caught before it."""
    problems: list[str] = []
    for name, (allowed, nullable) in _FIELD_TYPES.get(record.table, {}).items():  # other kinds: nothing to check
        value = getattr(record, name)
        if value is None:
            if not nullable:
                problems.append(f"{name}: missing")
        elif isinstance(value, bool) or not isinstance(value, allowed):
            problems.append(f"{name}: {type(value).__name__} {value!r:.40}, expected {' or '.join(t.__name__ for t in allowed)}")
    return problems
