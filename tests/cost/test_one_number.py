"""One number for one fact, and a cost table that reads at any width.

Each test here failed before: AWS's free egress allowance was stated but not applied, `cost`
priced AWS disk at gp2's $0.10 while `providers` showed gp3's $0.08, `cost -p tensordock` said
the provider had no published terms while `providers` showed its disk price, and at 80 columns
`cost` dropped the total and the offer id `--explain` needs.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.cost.terms import load_terms
from gpucat.warehouse import db
from gpucat.warehouse.db import query_sql

runner = CliRunner()
QLORA_8B = ["--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M"]


def invoke(*args: str, columns: int = 200):
    result = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result


def test_aws_explain_applies_the_free_egress_allowance(cost_db):
    out = invoke("cost", *QLORA_8B, "--spot", "--explain", "p4d.24xlarge/us-east-2/spot", "--db", str(cost_db)).stdout
    egress = out[out.index("egress: "):out.index("\ntotal: ")].splitlines()
    assert egress == [
        "egress: 0.08 GB (monthly free allowance 100 GB, assumed unused)",
        "  0.08 GB within the free allowance = $0",
        "  egress total: $0.00",
    ]
    row = next(r for r in json.loads(invoke("cost", *QLORA_8B, "--spot", "--top", "500", "--json", "--db", str(cost_db)).stdout)
               if r["offer_id"] == "p4d.24xlarge/us-east-2/spot")  # fmt: skip
    assert row["egress_usd"] == 0


def test_cost_and_providers_state_the_same_disk_price(catalog_db):
    """The cheapest storage a job can keep is the disk `gpucat providers` shows, provider by provider."""
    with db.connect(catalog_db, read_only=True) as con:
        cost_storage = {p: min(s.usd_per_gb_month for s in rows) for p, rows in load_terms(con).storage.items()}
        cursor = con.execute(query_sql("terms_side_by_side"), {"providers": []})
        columns = [d[0] for d in cursor.description]
        shown = {r["provider"]: r["persistent_storage_usd_per_gb_month"]
                 for r in (dict(zip(columns, row, strict=True)) for row in cursor.fetchall())
                 if r["persistent_storage_usd_per_gb_month"] is not None}  # fmt: skip
    assert cost_storage == pytest.approx(shown)
    assert cost_storage["aws"] == pytest.approx(0.08)  # EBS gp3, us-east-1 (aws-terms), not gp2's 0.10
    providers = invoke("providers", "-p", "aws", "--json", "--db", str(catalog_db)).stdout
    assert '"persistent_storage_usd_per_gb_month": 0.08' in providers


def test_no_no_terms_claim_where_providers_shows_terms(cost_db):
    rows = json.loads(invoke("cost", *QLORA_8B, "-p", "tensordock", "--json", "--db", str(cost_db)).stdout)
    assert rows and {r["provider"] for r in rows} == {"tensordock"}
    assert all(r["storage_usd"] is not None and "storage price" not in r["unknown"] for r in rows)
    table = invoke("cost", *QLORA_8B, "--both", "--db", str(cost_db))
    claim = re.search(r"no published terms: \d+ \(([^)]*)\)", table.stderr)
    assert claim and "tensordock" not in claim[1]


@pytest.mark.parametrize("columns", [80, 100])
def test_cost_keeps_the_total_and_a_pasteable_id_at_any_width(cost_db, columns):
    out = invoke("cost", *QLORA_8B, "--both", "--top", "5", "--db", str(cost_db), columns=columns).stdout
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("provider"))
    assert max(len(line) for line in lines[header:header + 7]) <= columns
    titles = lines[header].split()
    assert "total" in titles and "$" in titles and "id" in titles
    at = lines[header].index(" id") + 1
    first = lines[header + 2]
    short = first[at:at + 6]
    assert re.fullmatch(r"[0-9a-f]{6}", short), first
    explained = invoke("cost", *QLORA_8B, "--both", "--explain", short, "--db", str(cost_db), columns=columns).stdout
    provider = first.split()[0]
    assert explained.splitlines()[1].startswith(f"{provider} ") and "total: $" in explained


def test_notes_go_to_stderr_in_one_line_per_kind(cost_db):
    result = invoke("cost", *QLORA_8B, "--both", "--db", str(cost_db))
    assert not [line for line in result.stdout.splitlines() if line.startswith("left out")]
    assert len([line for line in result.stderr.splitlines() if line.startswith("left out")]) == 1
