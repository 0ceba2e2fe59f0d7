"""The one validation step every batch goes through, over the pandera model of its table.

`validate()` turns a source's records for a table into a polars frame of trusted rows plus a
list of `Rejected` rows, each with the reasons pandera (or the key check) gave. Whole-batch
problems (a column missing, a wrong type everywhere) raise `ParseError`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandera.polars as pa
import polars as pl

from gpucat.schemas import egress_terms, exchange_rates, interruption_rates, offers, storage_terms
from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Record, Rejected


@dataclass(frozen=True)
class Contract:
    table: str
    model: type[pa.DataFrameModel]
    key: tuple[str, ...]

    @property
    def columns(self) -> list[str]:
        return list(self.model.to_schema().columns)

    def polars_schema(self) -> dict[str, pl.DataType]:
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


def validate(table: str, records: Sequence[Record]) -> Validated:
    contract = CONTRACTS[table]
    unique, rejected = _unique(contract, records)
    frame = _frame(contract, unique)
    reasons = _failures(contract, frame)
    return _split(contract, unique, frame, rejected, reasons, check_rest=True)


def validate_each(table: str, groups: Sequence[Sequence[Record]]) -> list[Validated | Exception]:
    """`validate(table, group)` of every group (a source's records), in one pandera pass over all.

    Most of pandera's cost is per call, not per row (about 50 ms for a handful of rows), so a
    refresh validates every source's rows of a table together. The answer is the same as one
    call per group: keys are deduplicated within a group, every check is row by row, and each
    failure's row index names its group. A whole-batch problem (a failure with no row index), or
    any error of the joint pass, sends every group through `validate` alone, so the error lands
    on its own group (returned in its place, not raised).
    """
    contract = CONTRACTS[table]
    try:
        deduped = [_unique(contract, records) for records in groups]
        frames = [_frame(contract, unique) for unique, _ in deduped]
        reasons = _failures(contract, pl.concat(frames) if frames else _frame(contract, []))
    except Exception:  # noqa: BLE001 - not necessarily every group's fault: let each meet it alone
        return [_validate_alone(table, records) for records in groups]
    out: list[Validated | Exception] = []
    start = 0
    for (unique, rejected), frame in zip(deduped, frames, strict=True):
        end = start + frame.height
        own = {i - start: why for i, why in reasons.items() if start <= i < end}
        out.append(_split(contract, unique, frame, rejected, own, check_rest=False))
        start = end
    if reasons:  # what remains must pass; a failure here is a bug, not data
        rest = [v.frame for v in out if isinstance(v, Validated)]
        contract.model.validate(pl.concat(rest) if rest else _frame(contract, []))
    return out


def _validate_alone(table: str, records: Sequence[Record]) -> Validated | Exception:
    try:
        return validate(table, records)
    except Exception as exc:  # noqa: BLE001 - this group's own failure, handed back in its place
        return exc


def _unique(contract: Contract, records: Sequence[Record]) -> tuple[list[Record], list[Rejected]]:
    """Records with one occurrence of each natural key; the others are rejected visibly.

    A key listed again with the same content keeps its first row (`duplicate_key`). A key
    listed with different contents keeps none (`conflicting_duplicate_key` on every copy):
    which is the truth is unknowable, and the first one listed must not win by its place
    (the quarantine holds such a batch whole). Records stay records (no row dict each): a
    100k-offer batch would otherwise hold two dicts per offer at once."""
    keys = [tuple(_hashable(getattr(r, k, None)) for k in contract.key) for r in records]
    if len(set(keys)) == len(keys):
        return list(records), []
    by_key: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        by_key[key].append(i)
    unique: list[Record] = []
    rejected: list[Rejected] = []
    for key, at in by_key.items():
        named = dict(zip(contract.key, key, strict=True))
        first = records[at[0]]
        if len(at) > 1 and any(records[j].as_row() != first.as_row() for j in at[1:]):
            reason = f"conflicting_duplicate_key: {named} is listed {len(at)} times with different content"
            rejected.extend(Rejected(contract.table, (reason,), records[j].as_row()) for j in at)
            continue
        unique.append(first)
        rejected.extend(Rejected(contract.table, (f"duplicate_key: {named}",), records[j].as_row()) for j in at[1:])
    return unique, rejected


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) else repr(value)


def _frame(contract: Contract, records: Sequence[Record]) -> pl.DataFrame:
    """The records as a frame of the contract's columns, built column by column."""
    if not records:
        return pl.DataFrame(schema=contract.polars_schema())
    columns = {c: [getattr(r, c, None) for r in records] for c in contract.columns}
    return pl.DataFrame(columns, schema=contract.polars_schema(), strict=False)


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


def _split(
    contract: Contract, unique: list[Record], frame: pl.DataFrame, rejected: list[Rejected], reasons: dict[int, list[str]], *, check_rest: bool
) -> Validated:
    if not reasons:
        return Validated(contract.table, frame, rejected)
    bad = sorted(reasons)
    rejected = rejected + [Rejected(contract.table, tuple(dict.fromkeys(reasons[i])), unique[i].as_row()) for i in bad]
    frame = frame.with_row_index("_i").filter(~pl.col("_i").is_in(bad)).drop("_i")
    if check_rest:
        contract.model.validate(frame)  # what remains must pass; a failure here is a bug, not data
    return Validated(contract.table, frame, rejected)


def _shorten(reason: str, limit: int = 120) -> str:
    return reason if len(reason) <= limit else reason[: limit - 4] + "...)"
