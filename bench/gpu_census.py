"""Rejected GPU rows per source after a refresh: how many offers a source loses to its GPU names.

    uv run gpucat refresh --replay fixtures --db /tmp/g.duckdb
    uv run python bench/gpu_census.py /tmp/g.duckdb

A rejection counts as a GPU one when a reason starts with a GPU-mapping class of
`scrapers._gpus` or a parser's own (`unknown_gpu`, `ambiguous_gpu`, `ambiguous_form_factor`,
`memory_mismatch`, `mig_slice`, `not_a_gpu`, `unknown_gpu_count`); rows are counted once each.
"""

from __future__ import annotations

import sys

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


def main(argv: list[str] | None = None) -> None:
    db = (argv or sys.argv[1:] or ["/tmp/g.duckdb"])[0]
    rows = census(db)
    for source, cls, n in rows:
        print(f"{source:24} {cls:22} {n:4d}")
    print(f"{'total':24} {'':22} {sum(n for *_, n in rows):4d}")


if __name__ == "__main__":
    main()
