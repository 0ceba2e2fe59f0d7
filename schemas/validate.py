"""The one validation step every batch goes through, over the pandera model of its table.

`validate()` turns a source's records for a table into a polars frame of trusted rows plus a
list of `Rejected` rows, each with the reasons pandera (or the key check) gave. Whole-batch
problems (a column missing, a wrong type everywhere) raise `ParseError`.
"""

from __future__ import annotations

import importlib
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandera.polars as pa
import polars as pl

from gpucat.schemas import egress_terms, exchange_rates, interruption_rates, offers, storage_terms
from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import ParseItem, Record, Rejected, RowText, Skipped, record_columns


def _strategies_without_hypothesis() -> None:
    """pandera registers its data-synthesis strategies with its checks, on the first validation,
    and they import hypothesis where it is installed (a development install): 0.14 s of every
    refresh, for synthesis gpucat never asks for. Registered here with hypothesis hidden, so
    pandera takes its own no-hypothesis branch; a process that imported hypothesis first (the
    test suite) keeps it, and one that imports it later gets it, only not through pandera."""
    if "hypothesis" in sys.modules or "pandera.strategies.base_strategies" in sys.modules:
        return
    sys.modules["hypothesis"] = None  # type: ignore[assignment]  # `import hypothesis` raises ImportError
    try:
        importlib.import_module("pandera.strategies.base_strategies")
    finally:
        del sys.modules["hypothesis"]


_strategies_without_hypothesis()


@dataclass(frozen=True)
class Contract:
    table: str
    model: type[pa.DataFrameModel]
    key: tuple[str, ...]

    @property
    def columns(self) -> list[str]:
        return list(self._schema)

    def polars_schema(self) -> dict[str, pl.DataType]:
        return dict(self._schema)

    @cached_property
    def _schema(self) -> dict[str, pl.DataType]:
        # pandera builds the model's schema anew on each `to_schema()`: a fifth of a second of a
        # refresh that asked for it once per frame.
        return {name: col.dtype.type for name, col in self.model.to_schema().columns.items()}


CONTRACTS: dict[str, Contract] = {
    "offers": Contract("offers", offers.OfferRow, offers.KEY),
    "interruption_rates": Contract("interruption_rates", interruption_rates.InterruptionRate, interruption_rates.KEY),
    "exchange_rates": Contract("exchange_rates", exchange_rates.ExchangeRate, exchange_rates.KEY),
    "scraped_storage_terms": Contract("scraped_storage_terms", storage_terms.ScrapedStorageTerms, storage_terms.SCRAPED_KEY),
    "scraped_egress_terms": Contract("scraped_egress_terms", egress_terms.ScrapedEgressTerms, egress_terms.SCRAPED_KEY),
}


@dataclass(frozen=True)
class Validated:
    table: str
    frame: pl.DataFrame
    rejected: list[Rejected]


@dataclass(frozen=True)
class Collected:
    """A source's parse, held compactly until it is validated (`collect`).

    Its records are typed frames of their table's contract columns, built `COLLECT_ROWS` at a
    time as the parse streams, so a marketplace of 100k offers is never 100k record objects at
    once; its parse-time rejections keep their rows, and rows of plain JSON are held as their
    stored text. Nothing is validated yet: `validate_each` takes `frame(table)` as a group.
    """

    frames: dict[str, list[pl.DataFrame]]
    rejected: list[Rejected]
    skipped: int = 0  # rows the parser set aside as out of scope (`Skipped`), counted only

    def frame(self, table: str) -> pl.DataFrame:
        """The table's records, in parse order (chunks joined without copying)."""
        chunks = self.frames.get(table)
        return pl.concat(chunks, rechunk=False) if chunks else _frame(CONTRACTS[table], [])

    @property
    def rows(self) -> int:
        return sum(f.height for chunks in self.frames.values() for f in chunks) + len(self.rejected)


# Records per chunk `collect` turns into a frame: large enough that a chunk's frame costs little
# over its data, small enough that the chunk's record objects are a few MB.
COLLECT_ROWS = 10_000


def collect(items: Iterable[ParseItem], scrub: Callable[[Rejected], Rejected] = lambda r: r, chunk_rows: int | None = None) -> Collected:
    """A stream of parse items as a `Collected`: records into frames per table, every `chunk_rows`;
    rejections (through `scrub`, which redacts what must not be stored) and skip counts kept."""
    chunk_rows = chunk_rows or COLLECT_ROWS
    pending: dict[str, list[Record]] = defaultdict(list)
    frames: dict[str, list[pl.DataFrame]] = defaultdict(list)
    rejected: list[Rejected] = []
    skipped = 0
    for item in items:
        if isinstance(item, Rejected):
            clean = scrub(item)
            rejected.append(Rejected(clean.table, clean.reasons, RowText(clean.row)) if _plain_json(clean.row) else clean)
        elif isinstance(item, Skipped):
            skipped += item.count
        else:
            chunk = pending[item.table]
            chunk.append(item)
            if len(chunk) >= chunk_rows:
                frames[item.table].append(_frame(CONTRACTS[item.table], chunk))
                chunk.clear()
    for table, chunk in pending.items():
        if chunk:
            frames[table].append(_frame(CONTRACTS[table], chunk))
    return Collected(dict(frames), rejected, skipped)


def _plain_json(value: Any) -> bool:
    """Whether `value` reads back from JSON as itself (a raw row of a JSON answer does)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain_json(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def validate(table: str, records: Sequence[Record] | pl.DataFrame) -> Validated:
    """A table's records (or a `Collected` frame of them) as trusted rows and rejections."""
    contract = CONTRACTS[table]
    unique = _unique(contract, _Rows(contract, records))
    reasons = _failures(contract, unique.frame)
    return _split(contract, unique, reasons, check_rest=True)


def validate_each(table: str, groups: Sequence[Sequence[Record] | pl.DataFrame]) -> list[Validated | Exception]:
    """`validate(table, group)` of every group (a source's records), in one pandera pass over all.

    Most of pandera's cost is per call, not per row (about 50 ms for a handful of rows), so a
    refresh validates every source's rows of a table together. The answer is the same as one
    call per group: keys are deduplicated within a group, every check is row by row, and each
    failure's row index names its group. A whole-batch problem (a failure with no row index), or
    any error of the joint pass, sends every group through `validate` alone, so the error lands
    on its own group (returned in its place, not raised). A group is a list of records or, from
    `collect`, a frame of them.
    """
    contract = CONTRACTS[table]
    try:
        deduped = [_unique(contract, _Rows(contract, records)) for records in groups]
        frames = [unique.frame for unique in deduped]
        reasons = _failures(contract, pl.concat(frames) if frames else _frame(contract, []))
    except Exception:  # noqa: BLE001 - not necessarily every group's fault: let each meet it alone
        return [_validate_alone(table, records) for records in groups]
    out: list[Validated | Exception] = []
    start = 0
    for unique in deduped:
        end = start + unique.frame.height
        own = {i - start: why for i, why in reasons.items() if start <= i < end}
        out.append(_split(contract, unique, own, check_rest=False))
        start = end
    # The survivors are not validated again: a row's failure names only that row, and taking
    # failed rows out fails no other (the one check across rows, egress tiers' contiguity, passes
    # a tier whose predecessor is gone). A second pandera pass cost a refresh 0.15 s per table.
    return out


def _validate_alone(table: str, records: Sequence[Record] | pl.DataFrame) -> Validated | Exception:
    try:
        return validate(table, records)
    except Exception as exc:  # noqa: BLE001 - this group's own failure, handed back in its place
        return exc


class _Rows:
    """A group's rows as a frame of the contract's columns, and each row as a rejection stores it:
    the record's own `as_row()`, or, for a collected frame, the frame's row in the record's fields."""

    def __init__(self, contract: Contract, group: Sequence[Record] | pl.DataFrame):
        self.table = contract.table
        if isinstance(group, pl.DataFrame):
            self.records: Sequence[Record] | None = None
            self.frame = group
        else:
            self.records = group
            self.frame = _frame(contract, group)

    def keys(self, key: tuple[str, ...]) -> list[tuple[Any, ...]]:
        if self.records is not None:
            return [tuple(_hashable(getattr(r, k, None)) for k in key) for r in self.records]
        return [tuple(_hashable(v) for v in row) for row in self.frame.select(key).iter_rows()]

    def row(self, i: int) -> dict[str, Any]:
        if self.records is not None:
            return self.records[i].as_row()
        row = self.frame.row(i, named=True)
        return {name: row.get(name) for name in record_columns(self.table)}


@dataclass(frozen=True)
class _Unique:
    rows: _Rows
    frame: pl.DataFrame  # one row per key
    at: list[int] | None  # each row's index in `rows` (None: the same)
    rejected: list[Rejected]

    def row(self, i: int) -> dict[str, Any]:
        return self.rows.row(i if self.at is None else self.at[i])


def _unique(contract: Contract, rows: _Rows) -> _Unique:
    """Rows with one occurrence of each natural key; the others are rejected visibly.

    A key listed again with the same content keeps its first row (`duplicate_key`). A key
    listed with different contents keeps none (`conflicting_duplicate_key` on every copy):
    which is the truth is unknowable, and the first one listed must not win by its place
    (the quarantine holds such a batch whole). Records stay records (no row dict each): a
    100k-offer batch would otherwise hold two dicts per offer at once."""
    keys = rows.keys(contract.key)
    if len(set(keys)) == len(keys):
        return _Unique(rows, rows.frame, None, [])
    by_key: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        by_key[key].append(i)
    kept: list[int] = []
    rejected: list[Rejected] = []
    for key, at in by_key.items():
        named = dict(zip(contract.key, key, strict=True))
        first = rows.row(at[0])
        if len(at) > 1 and any(rows.row(j) != first for j in at[1:]):
            reason = f"conflicting_duplicate_key: {named} is listed {len(at)} times with different content"
            rejected.extend(Rejected(contract.table, (reason,), rows.row(j)) for j in at)
            continue
        kept.append(at[0])
        rejected.extend(Rejected(contract.table, (f"duplicate_key: {named}",), rows.row(j)) for j in at[1:])
    kept.sort()
    return _Unique(rows, rows.frame[kept] if kept else rows.frame.clear(), kept, rejected)


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) else repr(value)


def _frame(contract: Contract, records: Sequence[Record]) -> pl.DataFrame:
    """The records as a frame of the contract's columns, built column by column."""
    schema = contract.polars_schema()
    if not records:
        return pl.DataFrame(schema=schema)
    columns = {c: [getattr(r, c, None) for r in records] for c in contract.columns}
    return pl.DataFrame(
        [_strings(c, v) if schema[c] == pl.String else pl.Series(c, v, schema[c], strict=False) for c, v in columns.items()]
    )


# Rows from which a text column's repeated values share their bytes (`_strings`).
SHARED_STRINGS_FROM = 1_000


def _strings(name: str, values: list[Any]) -> pl.Series:
    """A text column whose repeated values share their bytes: polars stores each string of a
    list on its own, and a marketplace repeats a few long ones (its page URL: 26 of the 45 MB of
    100k Vast offers). Gathering from the distinct values keeps one copy of each. A short column
    is built as it is: the gather costs about a millisecond per column whatever its length, 0.2 s
    of a fixtures refresh's small frames, for bytes that do not matter there."""
    if len(values) < SHARED_STRINGS_FROM:
        return pl.Series(name, values, pl.String, strict=False)
    distinct: dict[Any, int] = {}
    try:
        at = [distinct.setdefault(v, len(distinct)) for v in values]
    except TypeError:  # a value of the wrong type, which validation rejects
        at = values
    if len(distinct) == len(values) or at is values:
        return pl.Series(name, values, pl.String, strict=False)
    return pl.Series(name, list(distinct), pl.String, strict=False).gather(pl.Series(at, dtype=pl.UInt32))


def _failures(contract: Contract, frame: pl.DataFrame) -> dict[int, list[str]]:
    """Row index -> the reasons pandera gives for it; `ParseError` when the batch as a whole fails."""
    try:
        contract.model.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        reasons: dict[int, list[str]] = defaultdict(list)
        for case in exc.failure_cases.iter_rows(named=True):
            index = case.get("index")
            what = case.get("column") or "row"
            what = "row" if what == contract.model.__name__ else what
            if index is None:
                raise ParseError(f"{contract.table}: batch does not match the schema: {what}: {case.get('check')} ({case.get('failure_case')})") from None
            reasons[int(index)].append(_shorten(f"{what}: {case.get('check')}"))
        return reasons
    return {}


def _split(contract: Contract, unique: _Unique, reasons: dict[int, list[str]], *, check_rest: bool) -> Validated:
    if not reasons:
        return Validated(contract.table, unique.frame, unique.rejected)
    bad = sorted(reasons)
    rejected = unique.rejected + [Rejected(contract.table, tuple(dict.fromkeys(reasons[i])), unique.row(i)) for i in bad]
    frame = unique.frame.with_row_index("_i").filter(~pl.col("_i").is_in(bad)).drop("_i")
    if check_rest:
        contract.model.validate(frame)  # what remains must pass; a failure here is a bug, not data
    return Validated(contract.table, frame, rejected)


def _shorten(reason: str, limit: int = 120) -> str:
    return reason if len(reason) <= limit else reason[: limit - 4] + "...)"
