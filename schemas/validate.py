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

from schemas import egress_terms, exchange_rates, interruption_rates, offers, storage_terms
from schemas.errors import ParseError
from schemas.records import Record, Rejected


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
    "offers": Contract("offers", offers.Offer, offers.KEY),
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
    columns = contract.columns
    rejected: list[Rejected] = []

    # Duplicate natural keys: the first occurrence wins, later ones are rejected visibly.
    seen: set[tuple[Any, ...]] = set()
    unique: list[dict[str, Any]] = []
    for record in (r.as_row() for r in records):
        key = tuple(record.get(k) for k in contract.key)
        if key in seen:
            rejected.append(Rejected(table, (f"duplicate_key: {dict(zip(contract.key, key, strict=True))}",), _row(record)))
            continue
        seen.add(key)
        unique.append(record)

    frame = pl.DataFrame([{c: r.get(c) for c in columns} for r in unique], schema=contract.polars_schema(), strict=False, orient="row") if unique else pl.DataFrame(schema=contract.polars_schema())
    try:
        contract.model.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        reasons: dict[int, list[str]] = defaultdict(list)
        for case in exc.failure_cases.iter_rows(named=True):
            index = case.get("index")
            what = case.get("column") or "row"
            what = "row" if what == contract.model.__name__ else what
            if index is None:
                raise ParseError(f"{table}: batch does not match the schema: {what}: {case.get('check')} ({case.get('failure_case')})") from None
            reasons[int(index)].append(_shorten(f"{what}: {case.get('check')}"))
        bad = sorted(reasons)
        rejected.extend(Rejected(table, tuple(dict.fromkeys(reasons[i])), _row(unique[i])) for i in bad)
        frame = frame.with_row_index("_i").filter(~pl.col("_i").is_in(bad)).drop("_i")
        contract.model.validate(frame)  # what remains must pass; a failure here is a bug, not data
    return Validated(table, frame, rejected)


def _row(record: dict[str, Any]) -> dict[str, Any]:
    return dict(record)


def _shorten(reason: str, limit: int = 120) -> str:
    return reason if len(reason) <= limit else reason[: limit - 4] + "...)"
