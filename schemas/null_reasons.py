"""`terms_null_reasons`: why a terms figure is NULL (reviewed data: schemas/reference/terms/null_reasons.csv).

A NULL figure in `providers`, `storage_terms` or `egress_terms` means one of three things, and
this table says which:

- `not_published`: the provider's own page that should state it (`reference_url`) does not;
- `not_found`: nobody found it; `searches` says where and with what it was looked for;
- `not_applicable`: the figure cannot hold a value for this row (spot notice without spot,
  the stopped rate of storage not billed while stopped, the end of an open-ended last tier, the
  allowance of traffic that is free without limit).

A rule names a provider, a table, the row it speaks for (`item`: a storage product, an egress
scope, or `*` for every row of the provider in that table) and the figure columns (space
separated, or `*` for every NULL figure of the matched rows). The most specific rule wins: a
named item before `*`, named columns before `*`. `not_applicable` also follows from the row
itself (`derived_reasons`), with no rule needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional

import pandera.polars as pa
import polars as pl

from gpucat.schemas import egress_terms, evidence, providers, storage_terms
from gpucat.schemas.reference import REFERENCE_DIR

CSV = REFERENCE_DIR / "terms" / "null_reasons.csv"
REASONS = ["not_published", "not_found", "not_applicable"]
TABLES = {
    "providers": (providers.FIGURES, None),
    "storage_terms": (storage_terms.FIGURES, "product"),
    "egress_terms": (egress_terms.FIGURES, "scope"),
}


class NullReasons(pa.DataFrameModel):
    provider: str = pa.Field(str_matches=r"^[a-z0-9-]+$")
    table: str = pa.Field(isin=list(TABLES))
    item: str = pa.Field(str_length={"min_value": 1}, description="storage product, egress scope, or * for every row")
    columns: str = pa.Field(str_matches=r"^(\*|[a-z_]+( [a-z_]+)*)$", description="figure columns, space separated, or *")
    reason: str = pa.Field(isin=REASONS)
    reference_url: Optional[str] = pa.Field(nullable=True, str_startswith="https://", description="not_published: the page that should state it")
    searches: Optional[str] = pa.Field(nullable=True, description="not_found: where and with what it was looked for")
    verified_on: str = pa.Field(str_matches=evidence.ISO_DATE)
    notes: Optional[str] = pa.Field(nullable=True)

    @pa.dataframe_check(description="not_published names the page; not_found says what was searched")
    def reason_backed(cls, data: pa.PolarsData) -> pl.LazyFrame:
        reason = pl.col("reason")
        ok = (
            ((reason != "not_published") | pl.col("reference_url").is_not_null())
            & ((reason != "not_found") | (pl.col("searches").str.len_chars().fill_null(0) > 0))
        )
        return data.lazyframe.select(ok.alias("ok"))

    @pa.dataframe_check(description="named columns are figure columns of the table")
    def columns_are_figures(cls, data: pa.PolarsData) -> pl.LazyFrame:
        def known(rule: dict[str, str]) -> bool:
            return rule["columns"] == "*" or set(rule["columns"].split(" ")) <= set(TABLES[rule["table"]][0])

        return data.lazyframe.select(pl.struct("table", "columns").map_elements(known, return_dtype=pl.Boolean).alias("ok"))

    @pa.dataframe_check(description="one rule per provider, table, item and columns")
    def key_unique(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select((~pl.struct("provider", "table", "item", "columns").is_duplicated()).alias("ok"))

    class Config:
        strict = True
        coerce = True


def derived_reasons(table: str, row: Mapping[str, Any], schedule_last_tier: bool = False) -> dict[str, str]:
    """Figures that cannot hold a value given the row's own other figures: {column: why}."""
    out: dict[str, str] = {}
    if table == "providers":
        if row.get("spot_offered") is False:
            out |= {"spot_notice_s": "no spot capacity", "spot_disk_fate": "no spot capacity"}
        if row.get("multi_node") is False:
            out |= {"fabric": "no multi-node", "fabric_gbps_per_node": "no multi-node"}
        if row.get("fabric") is None and row.get("multi_node") is False:
            out["fabric_gbps_per_node"] = "no multi-node"
    elif table == "storage_terms":
        if row.get("billed_while_stopped") is False:
            out["usd_per_gb_month_stopped"] = "not billed while stopped"
        if row.get("kind") == "object_storage":
            out |= {c: "object storage is not tied to an instance" for c in ("usd_per_gb_month_stopped", "persists_on_stop", "persists_on_terminate", "billed_while_stopped")}
    elif table == "egress_terms":
        if schedule_last_tier and row.get("from_gb") is not None:
            out["to_gb"] = "the last tier is open-ended"
        if row.get("usd_per_gb") == 0 and row.get("to_gb") is None:
            out |= {"free_allowance_gb_month": "the traffic is free without limit", "original_price": "nothing is charged"}
    return out


def _rule_rank(rule: Mapping[str, Any]) -> tuple[int, int]:
    return (rule["item"] == "*", rule["columns"] == "*")


def explain(table: str, rows: Sequence[Mapping[str, Any]], rules: Iterable[Mapping[str, Any]]) -> list[dict[str, dict[str, Any]]]:
    """For each row, its NULL figures and why: {column: {reason, why|reference_url|searches}};
    a NULL no rule covers gets reason `unexplained`."""
    figures, item_column = TABLES[table]
    candidates = sorted((r for r in rules if r["table"] == table), key=_rule_rank)
    last_tiers = _last_tiers(rows) if table == "egress_terms" else set()
    out = []
    for index, row in enumerate(rows):
        derived = derived_reasons(table, row, index in last_tiers)
        item = row.get(item_column) if item_column else "*"
        reasons: dict[str, dict[str, Any]] = {}
        for column in figures:
            if row.get(column) is not None:
                continue
            if column in derived:
                reasons[column] = {"reason": "not_applicable", "why": derived[column]}
                continue
            rule = next(
                (r for r in candidates if r["provider"] == row["provider"] and r["item"] in ("*", item)
                 and (r["columns"] == "*" or column in r["columns"].split(" "))),
                None,
            )  # fmt: skip
            reasons[column] = {"reason": "unexplained"} if rule is None else _reason(rule)
        out.append(reasons)
    return out


def _reason(rule: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("reason", "reference_url", "searches", "verified_on", "notes")
    return {k: rule[k] for k in keep if rule.get(k) is not None}


def _last_tiers(rows: Sequence[Mapping[str, Any]]) -> set[int]:
    """Indexes of the highest tier of each (provider, scope, region) schedule."""
    best: dict[tuple[Any, ...], tuple[int, int]] = {}
    for index, row in enumerate(rows):
        key = (row["provider"], row["scope"], row.get("region"))
        if key not in best or row["tier"] > best[key][0]:
            best[key] = (row["tier"], index)
    return {index for _, index in best.values()}


def read_rules() -> list[dict[str, Any]]:
    return NullReasons.validate(pl.read_csv(CSV, infer_schema_length=None)).to_dicts()
