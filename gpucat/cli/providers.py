"""`gpucat providers`: every provider's terms side by side."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gpucat.cli._app import app
from gpucat.cli._common import DbOption, JsonOption, echo_json, handle_errors, open_catalog, split_list
from gpucat.cli._render import Col, ColumnsOption, choose, print_records


def _seconds(value: int | None) -> str:
    if value is None:
        return ""
    for unit, size in (("h", 3600), ("min", 60)):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value} s"


def _billing(row: dict[str, Any]) -> str:
    step = _seconds(row["billing_increment_s"])
    if row["min_charge_s"] and row["min_charge_s"] != row["billing_increment_s"]:
        step += f" (min {_seconds(row['min_charge_s'])})"
    return step


def _yes_no(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "no")


def _spot(row: dict[str, Any]) -> str:
    if not row["spot_offered"]:
        return _yes_no(row["spot_offered"])
    details = [f"{_seconds(row['spot_notice_s'])} notice" if row["spot_notice_s"] is not None else "",
               f"disk {row['spot_disk_fate']}" if row["spot_disk_fate"] else ""]  # fmt: skip
    return ", ".join(["yes", *[d for d in details if d]])


def _fabric(row: dict[str, Any]) -> str:
    if not row["fabric"]:
        return ""
    gbps = row["fabric_gbps_per_node"]
    return f"{row['fabric']} {gbps:g} Gb/s" if gbps else row["fabric"]


@app.command()
@handle_errors
def providers(
    provider: Annotated[
        list[str] | None, typer.Option("--provider", "-p", help="Only these providers; repeat or comma-separate.")
    ] = None,
    columns: ColumnsOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Provider terms side by side: billing step, stopped billing, spot, fabric, storage and egress.

    Blank = not published, not found or not applicable (never guessed). `--json` prints every
    provider's full terms: each storage and egress row with its source URL, verified date and the
    quoted evidence, and for each blank figure why (`null_reasons`: not_published with the page
    that should state it, not_found with the searches made, or not_applicable).
    """
    from gpucat import terms
    from gpucat.suggest import check_names

    names = split_list(provider)
    shown = choose(PROVIDER_COLUMNS, PROVIDER_DEFAULT, columns)
    with open_catalog(db) as con:
        check_names("provider", names, [r["provider"] for r in terms.side_by_side(con, []).records()], show_all=True)
        if as_json:
            echo_json(terms.in_full(con, names))
            return
        rows = terms.side_by_side(con, names).records()
    print_records(shown, rows)


PROVIDER_COLUMNS = (
    Col("provider", shrink=False), Col("billing", get=_billing), Col("stopped_billed", "billed stopped", get=lambda r: _yes_no(r["stopped_instances_billed"])),
    Col("spot", get=_spot), Col("fabric", get=_fabric),
    Col("storage", "disk $/GB-mo", "money", lambda r: r["persistent_storage_usd_per_gb_month"]),
    Col("egress", "egress $/GB", "money", lambda r: r["egress_usd_per_gb"]),
    Col("free_egress", "free GB/mo", "gb", lambda r: r["egress_free_gb_month"]),
    Col("verified", get=lambda r: f"{r['oldest_verified_on']}{' (stale)' if r['stale'] else ''}", shrink=False),
)  # fmt: skip
PROVIDER_DEFAULT = ("provider", "billing", "stopped_billed", "spot", "storage", "egress", "free_egress", "verified", "fabric")
