"""How much of the reviewed provider terms is sourced: figure cells filled (each backed by a quote,
pandera checks that) against figure cells left NULL, per table and per provider, and which
providers publish terms in machine-readable form.

    uv run python bench/terms_coverage.py                 # per table, then machine-readable
    uv run python bench/terms_coverage.py --by-provider   # and one line per provider
    uv run python bench/terms_coverage.py --json

A figure cell is one of a table's `Config.metadata["figures"]` columns on one row; the
provenance columns and the key are not counted. "Machine-readable" has two readings, both
printed: sources in the registry that fill a terms table (scraped, with fixtures), and
providers whose reviewed rows say in `notes` that the terms are machine-readable somewhere
(an API field or price list that no source scrapes yet).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schemas import egress_terms, providers, storage_terms  # noqa: E402

MODELS = {
    "providers": (providers.CSV, providers.ProviderTerms),
    "storage_terms": (storage_terms.CSV, storage_terms.StorageTerms),
    "egress_terms": (egress_terms.CSV, egress_terms.EgressTerms),
}


def read(table: str) -> pl.DataFrame:
    csv, model = MODELS[table]
    return model.validate(pl.read_csv(csv, infer_schema_length=None))


def figure_counts(frame: pl.DataFrame, figures: tuple[str, ...], by: list[str] | None = None) -> pl.DataFrame:
    """Sourced (non-null) and null figure cells, overall or per group."""
    long = frame.select(*(by or []), *figures).unpivot(index=by, on=list(figures))
    counts = (pl.col("value").is_not_null().sum().alias("sourced"), pl.col("value").is_null().sum().alias("null"))
    out = long.group_by(by).agg(*counts) if by else long.select(*counts)
    return out.with_columns((pl.col("sourced") / (pl.col("sourced") + pl.col("null"))).round(3).alias("share"))


def coverage() -> dict:
    tables, per_provider = {}, {}
    said_machine_readable: set[str] = set()
    for table, (_, model) in MODELS.items():
        frame = read(table)
        figures = model.Config.metadata["figures"]
        total = figure_counts(frame, figures).row(0, named=True)
        tables[table] = {
            "rows": frame.height,
            "rows_with_evidence": frame["evidence"].is_not_null().sum(),
            **total,
        }
        for row in figure_counts(frame, figures, ["provider"]).iter_rows(named=True):
            entry = per_provider.setdefault(row["provider"], {})
            entry[table] = {"sourced": row["sourced"], "null": row["null"]}
        notes = frame.filter(pl.col("notes").str.contains("(?i)machine-readable"))
        said_machine_readable |= set(notes["provider"])
    return {
        "tables": tables,
        "providers": dict(sorted(per_provider.items())),
        "machine_readable": {"scraped_sources": scraped_terms_sources(), "stated_in_notes": sorted(said_machine_readable)},
    }


def scraped_terms_sources() -> dict[str, list[str]]:
    """Registry sources that fill a terms table: {provider: [source, ...]}."""
    from scrapers import all_sources

    found: dict[str, list[str]] = {}
    for name, source in sorted(all_sources().items()):
        if set(source.tables) & set(MODELS):
            found.setdefault(source.provider, []).append(name)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--by-provider", action="store_true", help="one line per provider as well")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    result = coverage()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'table':<14} {'rows':>5} {'w/ evidence':>12} {'sourced':>8} {'null':>6} {'share':>6}")
    for table, t in result["tables"].items():
        print(f"{table:<14} {t['rows']:>5} {t['rows_with_evidence']:>12} {t['sourced']:>8} {t['null']:>6} {t['share']:>6.1%}")
    if args.by_provider:
        print(f"\n{'provider':<14} " + " ".join(f"{t:>16}" for t in MODELS))
        for provider, counts in result["providers"].items():
            cells = (f"{counts[t]['sourced']}/{counts[t]['sourced'] + counts[t]['null']}" if t in counts else "-" for t in MODELS)
            print(f"{provider:<14} " + " ".join(f"{c:>16}" for c in cells))
    mr = result["machine_readable"]
    scraped = ", ".join(f"{p} ({', '.join(s)})" for p, s in mr["scraped_sources"].items()) or "none"
    print(f"\nmachine-readable terms scraped by a source: {scraped}")
    print(f"machine-readable per the reviewed notes: {', '.join(mr['stated_in_notes']) or 'none'}")


if __name__ == "__main__":
    main()
