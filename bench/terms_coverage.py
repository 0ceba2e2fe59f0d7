"""How much of the reviewed provider terms is sourced: figure cells filled (each backed by a quote,
pandera checks that) against figure cells left NULL, per table and per provider, and which
providers publish terms in machine-readable form.

    uv run python bench/terms_coverage.py                 # per table, then machine-readable
    uv run python bench/terms_coverage.py --by-provider   # and one line per provider, and the
                                                          # seed's checklist per provider
    uv run python bench/terms_coverage.py --json

The catalog block counts the terms as `gpucat providers` shows them: the reviewed rows merged with
what the terms sources scrape from the bundled fixtures (the `storage_terms` / `egress_terms`
views), and says of every NULL figure why it is NULL (schemas/null_reasons.py): not_published,
not_found, not_applicable, or unexplained when no rule covers it. `share` is sourced cells over
all figure cells; `share_applicable` leaves the not_applicable cells out of the count.

The checklist (`--by-provider`, and `checklist` in the JSON) says per provider, for each item of
the seed's checklist (storage that survives a stop and whether it is billed while stopped; billing
increment and minimum; spot and its notice; SSH, Docker and Jupyter; multi-node fabric), where
each of its figures stands: `scraped` (a terms source's row), `reviewed` (a quoted figure in the
reviewed CSVs), or the reason it is NULL (`not_published`, `not_found`, `not_applicable`). A
storage figure counts as stated when any of the provider's storage rows states it.

A figure cell is one of a table's `Config.metadata["figures"]` columns on one row; the
provenance columns and the key are not counted. "Machine-readable" has two readings, both
printed: sources in the registry that fill a terms table (scraped, with fixtures; their rows
from the bundled fixtures are counted too, each price quoting its price-list line), and
providers whose reviewed rows say in `notes` that the terms are machine-readable somewhere
(an API field or price list that no source scrapes yet).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpucat.schemas import egress_terms, providers, storage_terms  # noqa: E402

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
    catalog = catalog_coverage()
    checklist_by_provider = catalog.pop("checklist")
    return {
        "tables": tables,
        "providers": dict(sorted(per_provider.items())),
        "machine_readable": {"scraped_sources": scraped_terms_sources(), "stated_in_notes": sorted(said_machine_readable)},
        "scraped_from_fixtures": scraped_coverage(),
        "catalog": catalog,
        "checklist": checklist_by_provider,
    }


SCRAPED = {"scraped_storage_terms": storage_terms.ScrapedStorageTerms, "scraped_egress_terms": egress_terms.ScrapedEgressTerms}


def scraped_terms_sources() -> dict[str, list[str]]:
    """Registry sources that fill a terms table: {provider: [source, ...]}."""
    from gpucat.scrapers import all_sources

    found: dict[str, list[str]] = {}
    for name, source in sorted(all_sources().items()):
        if set(source.tables) & (set(MODELS) | set(SCRAPED)):
            found.setdefault(source.provider, []).append(name)
    return found


def scraped_coverage(fixtures: Path = ROOT / "fixtures") -> dict[str, dict]:
    """Figure cells of the scraped terms rows the bundled fixtures produce, per table and source."""
    from gpucat import pipeline
    from gpucat.scrapers import all_sources
    from gpucat.scrapers.normalize import latest_rates

    def bodies(source) -> list[Path]:
        folder = fixtures / source.provider / source.name
        return [folder / json.loads(line)["body"] for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]

    # the fixtures' own exchange rates, which convert a price list quoted in EUR (ovh-terms)
    rates = latest_rates(item for s in all_sources().values() if s.loads_first for item in pipeline.parse_source(s, pipeline.pages_from_files(bodies(s))))
    out: dict[str, dict] = {}
    for name, source in sorted(all_sources().items()):
        tables = set(source.tables) & set(SCRAPED)
        if not tables:
            continue
        items = pipeline.parse_source(source, pipeline.pages_from_files(bodies(source)), rates)
        for table in sorted(tables):
            rows = [item.as_row() for item in items if hasattr(item, "as_row") and item.table == table]
            figures = SCRAPED[table].Config.metadata["figures"]
            filled = sum(row.get(f) is not None for row in rows for f in figures)
            entry = out.setdefault(table, {"rows": 0, "sourced": 0, "null": 0, "sources": {}})
            entry["rows"] += len(rows)
            entry["sourced"] += filled
            entry["null"] += len(rows) * len(figures) - filled
            entry["sources"][name] = len(rows)
    return out


def catalog_coverage(fixtures: Path = ROOT / "fixtures") -> dict[str, dict]:
    """Figure cells of the merged terms tables, from the terms sources replayed over the fixtures,
    with the reason behind every NULL."""
    import tempfile

    from gpucat import pipeline
    from gpucat.schemas import null_reasons
    from gpucat.scrapers import all_sources
    from gpucat.warehouse import db

    sources = [s for s in all_sources().values() if s.loads_first or set(s.tables) & set(SCRAPED)]
    out: dict[str, dict] = {}
    tables_rows: dict[str, tuple[list[dict], list[dict]]] = {}
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "terms.duckdb"
        runs = pipeline.refresh_catalog(path, sources, replay_dir=fixtures)
        failed = [f"{r.source}: {r.error}" for r in runs if r.status != "ok"]
        if failed:
            raise SystemExit(f"terms sources failed on the fixtures: {failed}")
        with db.connect(path, read_only=True) as con:
            rules = _records(con, "SELECT * FROM terms_null_reasons")
            for table in MODELS:
                rows = _records(con, f"SELECT * FROM {table} ORDER BY ALL")  # noqa: S608 - table names are ours
                figures = null_reasons.TABLES[table][0]
                counts = {"rows": len(rows), "sourced": 0, "null": 0, **dict.fromkeys([*null_reasons.REASONS, "unexplained"], 0)}
                unexplained: list[str] = []
                for row, reasons in zip(rows, null_reasons.explain(table, rows, rules), strict=True):
                    counts["sourced"] += sum(row[f] is not None for f in figures)
                    counts["null"] += len(reasons)
                    for column, why in reasons.items():
                        counts[why["reason"]] += 1
                        if why["reason"] == "unexplained":
                            unexplained.append(f"{row['provider']}/{row.get('product') or row.get('scope') or '*'}/{column}")
                cells = counts["sourced"] + counts["null"]
                counts["share"] = round(counts["sourced"] / max(1, cells), 3)
                counts["share_applicable"] = round(counts["sourced"] / max(1, cells - counts["not_applicable"]), 3)
                counts["unexplained_cells"] = unexplained
                out[table] = counts
                tables_rows[table] = (rows, null_reasons.explain(table, rows, rules))
    out["checklist"] = checklist(tables_rows)
    return out


# The seed's checklist: item -> (table, figure columns that answer it).
CHECKLIST = {
    "storage survives a stop": ("storage_terms", ("persists_on_stop", "billed_while_stopped")),
    "storage price": ("storage_terms", ("usd_per_gb_month",)),
    "billing increment and minimum": ("providers", ("billing_increment_s", "min_charge_s")),
    "spot and its notice": ("providers", ("spot_offered", "spot_notice_s")),
    "ssh, docker, jupyter": ("providers", ("ssh", "custom_docker", "jupyter")),
    "multi-node fabric": ("providers", ("multi_node", "fabric")),
}
# When a provider's rows disagree on why a figure is NULL, the most telling reason is shown (an
# object store's not_applicable says nothing of the block volume nobody found a figure for).
_REASON_ORDER = ("not_published", "not_found", "not_applicable", "unexplained")
# The storage_terms view fills these on a scraped row from the reviewed row of its kind.
_FROM_REVIEWED = {"persists_on_stop", "persists_on_terminate", "billed_while_stopped"}


def checklist(tables_rows: dict[str, tuple[list[dict], list[dict]]]) -> dict[str, dict[str, dict[str, str]]]:
    """{provider: {item: {column: scraped | reviewed | not_published | not_found | not_applicable | unexplained}}}."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for item, (table, columns) in CHECKLIST.items():
        rows, reasons = tables_rows[table]
        for row, why in zip(rows, reasons, strict=True):
            entry = out.setdefault(row["provider"], {}).setdefault(item, {})
            for column in columns:
                if row[column] is not None:
                    scraped = row.get("origin", "reviewed") != "reviewed" and column not in _FROM_REVIEWED
                    status = "scraped" if scraped else "reviewed"
                else:
                    status = why[column]["reason"]
                entry[column] = _stronger(entry.get(column), status)
    return dict(sorted(out.items()))


def _stronger(current: str | None, new: str) -> str:
    rank = ("scraped", "reviewed", *_REASON_ORDER)
    return new if current is None or rank.index(new) < rank.index(current) else current


def _records(con, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--by-provider", action="store_true", help="one line per provider as well")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    result = coverage()
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'table':<21} {'rows':>5} {'w/ evidence':>12} {'sourced':>8} {'null':>6} {'share':>6}")
    for table, t in result["tables"].items():
        print(f"{table:<21} {t['rows']:>5} {t['rows_with_evidence']:>12} {t['sourced']:>8} {t['null']:>6} {t['share']:>6.1%}")
    if args.by_provider:
        print(f"\n{'provider':<14} " + " ".join(f"{t:>16}" for t in MODELS))
        for provider, counts in result["providers"].items():
            cells = (f"{counts[t]['sourced']}/{counts[t]['sourced'] + counts[t]['null']}" if t in counts else "-" for t in MODELS)
            print(f"{provider:<14} " + " ".join(f"{c:>16}" for c in cells))
    for table, t in result["scraped_from_fixtures"].items():
        share = t["sourced"] / max(1, t["sourced"] + t["null"])
        by_source = ", ".join(f"{n} {k}" for n, k in t["sources"].items())
        print(f"{table:<21} {t['rows']:>5} {'(scraped)':>12} {t['sourced']:>8} {t['null']:>6} {share:>6.1%}  from the fixtures: {by_source}")
    print("\ncatalog (reviewed + scraped from the fixtures): why each NULL figure is NULL")
    print(f"{'table':<15} {'rows':>5} {'sourced':>8} {'n/a':>5} {'not_pub':>8} {'not_found':>9} {'unexpl':>7} {'share':>6} {'of applicable':>13}")
    for table, t in result["catalog"].items():
        print(
            f"{table:<15} {t['rows']:>5} {t['sourced']:>8} {t['not_applicable']:>5} {t['not_published']:>8} {t['not_found']:>9}"
            f" {t['unexplained']:>7} {t['share']:>6.1%} {t['share_applicable']:>13.1%}"
        )
    if args.by_provider:
        print_checklist(result["checklist"])
    mr = result["machine_readable"]
    scraped = ", ".join(f"{p} ({', '.join(s)})" for p, s in mr["scraped_sources"].items()) or "none"
    print(f"\nmachine-readable terms scraped by a source: {scraped}")
    print(f"machine-readable per the reviewed notes: {', '.join(mr['stated_in_notes']) or 'none'}")


CODES = {"scraped": "S", "reviewed": "R", "not_published": "np", "not_found": "nf", "not_applicable": "na", "unexplained": "??"}


def print_checklist(table: dict[str, dict[str, dict[str, str]]]) -> None:
    print("\nthe seed's checklist per provider (S scraped, R reviewed with a quote; NULL: np not_published, nf not_found, na not_applicable)")
    heads = {item: "/".join(c.removesuffix("_s").removeprefix("custom_") for c in columns) for item, (_, columns) in CHECKLIST.items()}
    widths = {item: max(len(heads[item]), 3 * len(CHECKLIST[item][1]) - 1) for item in CHECKLIST}
    print(f"{'provider':<13} " + " ".join(f"{heads[i]:<{widths[i]}}" for i in CHECKLIST))
    for provider, items in table.items():
        cells = (" ".join(CODES[items.get(i, {}).get(c, "unexplained")] for c in CHECKLIST[i][1]) for i in CHECKLIST)
        print(f"{provider:<13} " + " ".join(f"{cell:<{widths[i]}}" for cell, i in zip(cells, CHECKLIST, strict=True)))


if __name__ == "__main__":
    main()
