"""Provenance shared by the terms tables (`providers`, `storage_terms`, `egress_terms`).

Every row names the page it was checked against (`source_url`) and the day (`verified_on`).
Every figure in it is backed by a quote: `evidence` is one or more segments joined by ` || `,
each of the form

    column[,column...]: "the sentence or table cell, quoted exactly" <https://page>

A figure (a non-null figure column) must be named by some segment; a row whose figures are all
null carries no evidence but must say in `notes` what was looked for and not found.
"""

from __future__ import annotations

import re
from datetime import date

import polars as pl

SEGMENT_SEPARATOR = " || "
SEGMENT = re.compile(r'^(?P<columns>[a-z_]+(?:,[a-z_]+)*): "(?P<quote>.+)" <(?P<url>https://\S+)>$')
ISO_DATE = r"^\d{4}-\d{2}-\d{2}$"
# Rows checked before this day predate the project; later than today is a typo.
EARLIEST_VERIFIED_ON = date(2024, 1, 1)


def segments(evidence: str) -> list[dict[str, str]]:
    """The quotes of one `evidence` cell: columns it backs, the quote and its URL."""
    out = []
    for raw in evidence.split(SEGMENT_SEPARATOR):
        match = SEGMENT.match(raw)
        if match is None:
            raise ValueError(f"malformed evidence segment: {raw!r}")
        out.append({"columns": match["columns"], "quote": match["quote"], "url": match["url"]})
    return out


def _tag(column: str) -> str:
    """Regex: some segment lists `column` before its quote."""
    return rf'(?:^|{re.escape(SEGMENT_SEPARATOR)})(?:[a-z_]+,)*{column}(?:,[a-z_]+)*: "'


def evidence_well_formed() -> pl.Expr:
    ok = pl.col("evidence").str.split(SEGMENT_SEPARATOR).list.eval(pl.element().str.contains(SEGMENT.pattern)).list.all()
    return (pl.col("evidence").is_null() | ok.fill_null(False)).alias("ok")


def figures_quoted(figures: tuple[str, ...]) -> pl.Expr:
    """Each non-null figure is named by an evidence segment."""
    ok = pl.lit(True)
    for column in figures:
        ok = ok & (pl.col(column).is_null() | pl.col("evidence").str.contains(_tag(column)).fill_null(False))
    return ok.alias("ok")


def unsourced_rows_explained() -> pl.Expr:
    """A row without evidence has no figures (see figures_quoted) and says why in `notes`."""
    return (pl.col("evidence").is_not_null() | (pl.col("notes").str.len_chars() > 0).fill_null(False)).alias("ok")


def verified_on_plausible() -> pl.Expr:
    day = pl.col("verified_on").str.to_date("%Y-%m-%d", strict=False)
    return day.is_between(pl.lit(EARLIEST_VERIFIED_ON), pl.lit(date.today())).fill_null(False).alias("ok")
