"""Terminal tables fit $COLUMNS, numbers keep their precision, unknown names are suggested."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.cli._render import Col, cell_len, jsonable, money, render
from gpucat.scrapers import all_sources

runner = CliRunner()
MONEY = re.compile(r"^\d{1,3}(,\d{3})*\.\d{2,4}$")


def invoke(*args: str, columns: int = 100, fails: bool = False):
    result = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert (result.exit_code != 0 if fails else result.exit_code == 0), result.output
    return result


COMMANDS = [
    ["offers", "--limit", "200"],
    ["offers", "--gpu", "H100,A100", "--columns", "all"],
    ["fit", "--model", "llama-3.1-8b", "--method", "qlora"],
    ["fit", "--model", "llama-3.1-70b", "--method", "full", "--max-gpus", "16", "--columns", "all"],
    ["status"],
    ["status", "--columns", "all"],
    ["providers"],
    ["sources"],
]


@pytest.mark.parametrize("width", [100, 80])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_no_line_is_wider_than_the_terminal_and_no_price_is_split(catalog_db, args, width):
    extra = [] if args[0] == "sources" else ["--db", str(catalog_db)]
    result = invoke(*args, *extra, columns=width)
    lines = result.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= width, "\n".join(line for line in lines if len(line) > width)
    if args[0] in ("offers", "fit"):
        header = next(i for i, line in enumerate(lines) if line.startswith("provider"))
        starts = [m.start() for m in re.finditer(r"\S+", lines[header + 1])]  # the rule under the header
        ends = [m.end() for m in re.finditer(r"\S+", lines[header + 1])]
        for title in ("$/h", "$/gpu-h"):
            if title not in lines[header].split():
                continue
            col = next(i for i, (s, e) in enumerate(zip(starts, ends, strict=True)) if lines[header][s:e].strip() == title)
            cells = [line[starts[col] : ends[col]].strip() for line in lines[header + 2 :]]
            assert cells and all(MONEY.match(c) for c in cells), cells


def test_offers_json_keeps_whole_values_the_table_shortens(catalog_db):
    rows = json.loads(invoke("offers", "--json", "--limit", "500", "--db", str(catalog_db)).stdout)
    assert all(isinstance(r["gpu_count"], int) or not float(r["gpu_count"]).is_integer() for r in rows)
    assert any(isinstance(r["gpu_count"], int) for r in rows)
    longest = max(rows, key=lambda r: len(r["instance_type"]))["instance_type"]
    table = invoke("offers", "--limit", "500", "--columns", "provider,instance,price", "--db", str(catalog_db), columns=40).stdout
    assert longest not in table and "…" in table


@pytest.mark.parametrize(
    ("value", "text"),
    [(110.1184, "110.12"), (2.1, "2.10"), (1.0, "1.00"), (0.09, "0.09"), (0.456, "0.456"), (0.04567, "0.0457"),
     (0.0045, "0.0045"), (0.9999, "1.00"), (0.0, "0.00"), (12345.5, "12,345.50"), (None, "")],
)  # fmt: skip
def test_money_is_cents_or_three_significant_digits(value, text):
    assert money(value) == text


def test_jsonable_makes_whole_counts_integers_and_keeps_slices():
    assert jsonable({"gpu_count": 1.0, "nodes": 2.0, "usd_per_hour": 1.0}) == {"gpu_count": 1, "nodes": 2, "usd_per_hour": 1.0}
    assert jsonable({"gpu_count": 0.5}) == {"gpu_count": 0.5}


def test_layout_right_aligns_numbers_and_drops_trailing_columns_last():
    columns = [Col("name"), Col("price", kind="money"), Col("note")]
    records = [{"name": "a" * 30, "price": 1.5, "note": "x" * 40}, {"name": "b", "price": 110.1184, "note": None}]
    lines, hidden = render(columns, records, limit=20)  # name and price need 14, the note 8 more
    assert hidden == ["note"] and all(len(line) <= 20 for line in lines)
    assert lines[2].endswith("  1.50") and lines[3].endswith("110.12") and "…" in lines[2]


# Names from the registry, not from a list here: the longest provider and source, misspelt.
_PROVIDER = max(sorted({s.provider for s in all_sources().values() if "offers" in s.tables}), key=len)
_SOURCE = max(sorted(all_sources()), key=len)


def stock_providers(catalog_db, with_terms: bool = False) -> tuple[str, str]:
    """A provider that reports stock (its offers available or not) and one that publishes none;
    `with_terms`: only providers whose terms let `gpucat cost` price a job."""
    from gpucat.cost.terms import load_terms
    from gpucat.warehouse import db

    with db.connect(catalog_db, read_only=True) as con:
        rows = con.execute(
            "SELECT provider, list(DISTINCT availability ORDER BY availability) FROM current_offers GROUP BY provider ORDER BY provider"
        ).fetchall()
        if with_terms:
            terms = load_terms(con)
            rows = [(p, kinds) for p, kinds in rows if terms.has_terms(p)]
    reporting = next(p for p, kinds in rows if "available" in kinds and "unknown" not in kinds)
    silent = next(p for p, kinds in rows if kinds == ["unknown"])
    return reporting, silent


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["offers", "--provider", _PROVIDER[:-1]], f"did you mean '{_PROVIDER}'"),
        (["offers", "--gpu", "H10"], "did you mean 'H100'"),
        (["offers", "--gpu", "h100-sxn"], "did you mean 'H100-SXM'"),
        (["offers", "--columns", "prise"], "did you mean 'price'"),
        (["fit", "--model", "llama-3.1-8b", "--provider", _PROVIDER[:-1]], f"did you mean '{_PROVIDER}'"),
        (["refresh", "--providers", _SOURCE[:-1], "--replay", "fixtures"], f"did you mean '{_SOURCE}'"),
        (["models", "lamma-3.2"], "no model matches 'lamma-3.2'; did you mean"),
    ],
    ids=["provider", "family", "model", "column", "fit-provider", "refresh-source", "models"],
)
def test_unknown_names_are_one_error_line_with_a_suggestion(catalog_db, args, expected):
    extra = ["--db", str(catalog_db)] if args[0] in ("offers", "fit", "refresh") else []
    if args[0] == "refresh":
        extra = ["--db", str(catalog_db.parent / "never-written.duckdb")]
    result = invoke(*args, *extra, fails=True)
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and expected in line


def test_available_keeps_unknown_stock_and_says_what_it_means(catalog_db):
    reporting, silent = stock_providers(catalog_db)
    both = f"{reporting},{silent}"
    result = invoke("offers", "--available", "--provider", both, "--limit", "1000", "--json", "--db", str(catalog_db))
    rows = json.loads(result.stdout)
    assert {r["availability"] for r in rows if r["provider"] == silent} == {"unknown"}
    assert {r["availability"] for r in rows if r["provider"] == reporting} == {"available"}
    table = invoke("offers", "--available", "--provider", both, "--db", str(catalog_db), columns=200)
    assert f"stock reported by {reporting}" in table.stderr
    assert f"no stock published by {silent} (kept, shown as unknown)" in table.stderr


def test_fit_names_the_filter_that_emptied_the_answer(catalog_db):
    # A provider whose every single-GPU offer that fits an 8B full fine-tune is reported out of stock.
    job = ["fit", "--model", "llama-3.1-8b", "--method", "full", "--max-gpus", "1", "--limit", "1000"]
    fits = json.loads(invoke(*job, "--json", "--db", str(catalog_db)).stdout)["offers"]
    by_provider: dict[str, set[str]] = {}
    for row in fits:
        by_provider.setdefault(row["provider"], set()).add(row["availability"])
    provider = next(p for p, kinds in sorted(by_provider.items()) if kinds == {"unavailable"})
    args = [*job, "--provider", provider]
    assert "No current offer fits" not in invoke(*args, "--db", str(catalog_db)).stdout
    out = invoke(*args, "--available", "--db", str(catalog_db)).stdout
    assert "No current offer fits: --available left none of the" in out


def test_sql_resolves_catalog_names_only(catalog_db):
    out = invoke("sql", "SELECT count(*) AS n FROM offers", "--format", "json", "--db", str(catalog_db)).stdout
    same = invoke("sql", "SELECT count(*) AS n FROM current_offers", "--format", "json", "--db", str(catalog_db)).stdout
    assert json.loads(out) == json.loads(same) and json.loads(out)[0]["n"] > 0
    for name in ("con", "sql", "duckdb", "app"):
        result = invoke("sql", f"SELECT * FROM {name}", "--db", str(catalog_db), fails=True)
        assert "does not exist" in result.stderr and "Python" not in result.stderr


def test_parse_names_tables_that_sql_resolves(catalog_db):
    from gpucat import pipeline
    from gpucat.schemas.records import ExchangeRate, InterruptionRate, Offer
    from gpucat.scrapers import all_sources
    from tests.conftest import fixture_pages

    loaded = (Offer, InterruptionRate, ExchangeRate)  # what a parse line names as its table once loaded
    tables = {item.table for name, source in all_sources().items() for item in pipeline.parse_source(source, fixture_pages(name))
              if isinstance(item, loaded)}  # fmt: skip
    assert "offers" in tables
    for table in tables:
        invoke("sql", f"SELECT * FROM {table} LIMIT 1", "--db", str(catalog_db))


@pytest.mark.parametrize("command", ["memory", "fit", "cost", "report", "offers", "refresh"])
def test_help_reads_at_80_columns(command):
    result = invoke(command, "--help", columns=80)
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80 and len(lines) <= 130  # fit --help was 221 lines


@pytest.mark.parametrize(
    ("args", "expected"),
    [(["offers", "--limit", "x"], "--limit"), (["offers", "--bogus"], "No such option: --bogus"), (["nope"], "No such command")],
)
def test_usage_errors_are_one_error_line_not_a_panel(args, expected):
    result = invoke(*args, fails=True)
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and expected in line and "╭" not in result.stderr


def test_offers_names_the_filter_that_emptied_the_answer(catalog_db):
    everything = json.loads(invoke("offers", "--gpu", "H100", "--json", "--limit", "1000", "--db", str(catalog_db)).stdout)
    out = invoke("offers", "--gpu", "H100", "--max-price", "0.01", "--db", str(catalog_db)).stdout
    assert out == f"No current offer matches: --max-price left none of the {len(everything)} that match otherwise.\n"


def test_memory_text_wraps_at_the_terminal_width_keeping_its_columns():
    result = invoke("memory", "--model", "llama-3.1-8b", "--method", "qlora", columns=80)
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    piped = runner.invoke(app, ["memory", "--model", "llama-3.1-8b", "--method", "qlora"])
    assert " ".join(result.stdout.split()) == " ".join(piped.stdout.split())  # same words, only the breaks differ


def test_cost_fits_100_columns_and_keeps_money_whole(catalog_db, tmp_path):
    import shutil

    db = tmp_path / "cost.duckdb"
    shutil.copy(catalog_db, db)  # cost saves its rows
    args = ["cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "200M", "--both", "--db", str(db)]
    lines = invoke(*args, columns=100).stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    header = next(i for i, line in enumerate(lines) if line.startswith("provider"))
    total = lines[header].index("total $") + len("total $")
    cells = [line[:total].rsplit(" ", 1)[-1] for line in lines[header + 2 :] if line and not line.startswith(("left out", ">=", "assumed"))]
    cells = [c for c in cells if c]
    assert cells and all(MONEY.match(c.removeprefix(">=")) for c in cells[:20]), cells


def test_cost_available_says_what_it_means(catalog_db, tmp_path):
    import shutil

    db = tmp_path / "cost.duckdb"
    shutil.copy(catalog_db, db)
    reporting, silent = stock_providers(catalog_db, with_terms=True)
    args = ["cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "200M", "--provider", f"{reporting},{silent}", "--available"]
    out = invoke(*args, "--db", str(db), columns=200).stderr  # notes go to stderr, the table to stdout
    assert f"stock reported by {reporting}; no stock published by {silent} (kept, shown as unknown)" in out


@pytest.mark.parametrize(
    "text",
    ["", "H100-SXM", "  1.60 ", "~!@#$%^&*()_+{}|:<>?`-=[]\\;',./", "tab\there", "nul\x00", "bell\x07", "del\x7f", "esc\x1b[1m",
     "…", "东京", "🚀 wide", "e\u0301", "zero\u200bwidth", "\u00a0nbsp", "────"],
    ids=repr,
)  # fmt: skip
def test_cell_len_counts_as_rich_counts(text):
    from rich.cells import cell_len as rich_cell_len

    assert cell_len(text) == rich_cell_len(text)
