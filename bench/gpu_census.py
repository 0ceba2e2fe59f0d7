"""Rejected GPU rows per source: how many offers a source loses to its GPU names, and which names.

    uv run gpucat refresh --replay fixtures --db /tmp/g.duckdb
    uv run python bench/gpu_census.py /tmp/g.duckdb        # rows per source and reason, from a refresh
    uv run python bench/gpu_census.py --fixtures [DIR]     # every GPU string, every source's parser

A rejection counts as a GPU one when a reason starts with a GPU-mapping class of
`scrapers._gpus` or a parser's own (`unknown_gpu`, `ambiguous_gpu`, `ambiguous_form_factor`,
`memory_mismatch`, `mig_slice`, `not_a_gpu`, `unknown_gpu_count`); rows are counted once each.

`--fixtures` parses and normalizes each offer source's fixture folder directly (no database, and
fallback sources such as `lambda-page` included, which a refresh skips while their primary is
ok), then lists every distinct GPU string with what it became: grouped by reason for the rejected
ones, and the strings mapped to a stand-in (`-AnyForm`, `-AnyEdition`: the form factor or edition
unstated) apart from the rest.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

import duckdb

GPU_REASONS = ("unknown_gpu", "ambiguous_gpu", "ambiguous_form_factor", "memory_mismatch", "mig_slice", "not_a_gpu", "unknown_gpu_count")


def census(db: str) -> list[tuple[str, str, int]]:
    """(source, reason class, rows) over the latest run of each source, GPU classes only."""
    with duckdb.connect(db, read_only=True) as con:
        rows = con.execute(
            """
            with latest as (select source, max(rejected_at) as at from rejected_rows group by source)
            select r.source, split_part(reason, ':', 1) as class, count(distinct r.row_json) as n
            from rejected_rows r join latest l on r.source = l.source and r.rejected_at = l.at,
                 unnest(r.reasons) as u(reason)
            where r.table_name = 'offers' and list_contains(?, split_part(reason, ':', 1))
            group by all order by all
            """,
            [list(GPU_REASONS)],
        ).fetchall()
    return [(s, c, int(n)) for s, c, n in rows]


def fixture_census(fixtures: Path) -> tuple[Counter, Counter]:
    """(mapped, rejected) over every offer source's fixtures: mapped counts (source, gpu_name,
    gpu_model) offers; rejected counts (source, reason) rows whose reason is a GPU one."""
    from gpucat import pipeline
    from gpucat.schemas.records import Offer, Rejected
    from gpucat.scrapers import all_sources
    from gpucat.scrapers.normalize import rates_by_currency

    def pages(source):  # type: ignore[no-untyped-def]
        work = Path(tempfile.mkdtemp(prefix="gpucat-census-"))
        return pipeline.fetch_source(source, pipeline.FetchOptions(workdir=work, replay_dir=fixtures)).pages

    sources = {n: s for n, s in sorted(all_sources().items()) if (fixtures / s.provider / s.name).is_dir()}
    rates = rates_by_currency(i for s in sources.values() if s.loads_first for i in pipeline.parse_source(s, pages(s)))
    mapped: Counter = Counter()
    rejected: Counter = Counter()
    for name, source in sources.items():
        if "offers" not in source.tables:
            continue
        for item in pipeline.parse_source(source, pages(source), rates):
            if isinstance(item, Offer):
                mapped[(name, item.gpu_name, item.gpu_model)] += 1
            elif isinstance(item, Rejected) and item.table == "offers":
                for reason in item.reasons:
                    if reason.startswith(GPU_REASONS):
                        rejected[(name, reason)] += 1
    return mapped, rejected


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["--fixtures"]:
        mapped, rejected = fixture_census(Path(args[1] if len(args) > 1 else "fixtures"))
        print("rejected GPU strings, by reason class:")
        for cls in GPU_REASONS:
            rows = sorted((s, r, n) for (s, r), n in rejected.items() if r.split(":", 1)[0] == cls)
            for source, reason, n in rows:
                print(f"  {cls:22} {source:22} {n:3d}  {reason.split(':', 1)[1].strip()}")
        print(f"  {'total':45} {sum(rejected.values()):3d}")
        stand_ins = sorted((s, g, m, n) for (s, g, m), n in mapped.items() if m and m.endswith(("-AnyForm", "-AnyEdition")))
        print("mapped to a stand-in (form factor or edition unstated):")
        for source, gpu_name, model, n in stand_ins:
            print(f"  {source:22} {gpu_name!r:40} -> {model} ({n})")
        names = {(s, g) for (s, g, _m) in mapped}
        print(f"mapped: {sum(mapped.values())} offers from {len(names)} distinct (source, GPU string) pairs")
        return
    db = (args or ["/tmp/g.duckdb"])[0]
    rows = census(db)
    for source, cls, n in rows:
        print(f"{source:24} {cls:22} {n:4d}")
    print(f"{'total':24} {'':22} {sum(n for *_, n in rows):4d}")


if __name__ == "__main__":
    main()
