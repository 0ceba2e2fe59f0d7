"""`gpucat cost` over the replayed catalog: ranking by job cost, parts, spot rows, SQL, errors."""

from __future__ import annotations

import json

import duckdb
import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.warehouse import db

runner = CliRunner()
QLORA_8B = ["--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M"]
PARTS = ("compute_usd", "storage_usd", "egress_usd", "spot_overhead_usd")


def cost_json(path, *args: str) -> list[dict]:
    result = runner.invoke(app, ["cost", *args, "--json", "--db", str(path)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_both_markets_ranked_by_job_cost_with_parts_that_add_up(cost_db):
    rows = cost_json(cost_db, *QLORA_8B, "--both", "--top", "500")
    assert {r["market"] for r in rows} == {"on_demand", "spot"}
    assert {r["provider"] for r in rows} >= {"aws", "runpod"}
    assert [r["total_usd"] for r in rows] == sorted(r["total_usd"] for r in rows)
    for r in rows:
        assert set(r) >= {"provider", "offer_id", "gpu_model", "gpus", "usd_per_hour", "hours", *PARTS, "total_usd",
                          "market", "availability"}  # fmt: skip
        assert r["total_usd"] == pytest.approx(sum(r[p] or 0 for p in PARTS), abs=1e-3)
        assert [p for p in ("storage_usd", "egress_usd") if r[p] is None] == [
            p for p, term in (("storage_usd", "storage price"), ("egress_usd", "egress price")) if term in r["unknown"]
        ]
        assert r["hours"] > 0 and r["compute_usd"] > 0


def test_job_cost_ranking_differs_from_the_hourly_price_ranking(cost_db):
    rows = cost_json(cost_db, *QLORA_8B, "--on-demand", "--top", "500")
    hourly = sorted(rows, key=lambda r: r["usd_per_hour"])
    assert [r["offer_id"] for r in rows] != [r["offer_id"] for r in hourly]
    # A pricier hour that finishes the job sooner comes first somewhere in the list.
    assert any(a["usd_per_hour"] > b["usd_per_hour"] and a["hours"] < b["hours"] for a, b in zip(rows, rows[1:]))


def test_spot_rows_carry_their_interruption_assumption_and_on_demand_rows_none(cost_db):
    rows = cost_json(cost_db, *QLORA_8B, "--both", "--top", "500")
    for r in rows:
        if r["market"] == "spot":
            assert r["interruption_basis"] and r["expected_interruptions"] is not None
        else:
            assert r["interruption_basis"] is None and r["expected_interruptions"] is None
            assert r["spot_overhead_usd"] == 0
    aws_spot = [r for r in rows if r["provider"] == "aws" and r["market"] == "spot"]
    assert aws_spot and all("AWS Spot Advisor band" in r["interruption_basis"] for r in aws_spot)
    runpod_spot = [r for r in rows if r["provider"] == "runpod" and r["market"] == "spot"]
    assert runpod_spot and all("assumed" in r["interruption_basis"] for r in runpod_spot)


def test_a_provider_without_spot_shows_no_spot_rows(cost_db):
    # Lambda sells no spot capacity; give it RunPod's on-demand offers under its own name.
    con = duckdb.connect(str(cost_db))
    con.execute("""INSERT INTO offer_versions SELECT * REPLACE ('lambda' AS provider) FROM offer_versions
                   WHERE provider = 'runpod' AND market = 'on_demand' AND valid_to IS NULL""")  # fmt: skip
    con.close()
    rows = cost_json(cost_db, *QLORA_8B, "--both", "--provider", "lambda", "--top", "500")
    assert rows and {r["market"] for r in rows} == {"on_demand"}
    assert all(r["interruption_basis"] is None and r["spot_overhead_usd"] == 0 for r in rows)
    assert cost_json(cost_db, *QLORA_8B, "--spot", "--provider", "lambda") == []


def test_table_lists_the_columns_and_every_default(cost_db):
    result = runner.invoke(app, ["cost", *QLORA_8B, "--both", "--top", "5", "--db", str(cost_db)])
    assert result.exit_code == 0, result.output
    for column in ("provider", "GPUs", "est. hours", "compute $", "storage $", "egress $", "total $", "availability"):
        assert column in result.stdout
    assert "assumed:" in result.stdout
    for default in ("4 bytes of text per token", "168 h retention", "checkpoint every 0.5 h", "10 min to restart",
                    "no published rate"):  # fmt: skip
        assert default in result.stdout
    assert "not published" in result.stdout


def test_explain_prints_the_arithmetic_of_one_offer(cost_db):
    rows = cost_json(cost_db, *QLORA_8B, "--spot", "--provider", "aws", "--top", "1")
    offer = rows[0]["offer_id"]
    result = runner.invoke(app, ["cost", *QLORA_8B, "--spot", "--provider", "aws", "--explain", offer, "--db", str(cost_db)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for step in ("throughput:", "time:", "spot:", "compute:", "storage", "egress", "total:"):
        assert step in text
    assert f"= ${rows[0]['total_usd']:.2f}" in text


def test_sql_view_shows_the_same_numbers(cost_db):
    rows = cost_json(cost_db, *QLORA_8B, "--both", "--top", "10", "--save")
    with db.connect(cost_db, read_only=True) as con:
        sql = con.execute(
            "SELECT provider, offer_id, total_usd, compute_usd + coalesce(storage_usd, 0) + coalesce(egress_usd, 0)"
            " + spot_overhead_usd "
            "FROM latest_job_costs ORDER BY rank"
        ).fetchall()
    assert [(p, o) for p, o, _, _ in sql] == [(r["provider"], r["offer_id"]) for r in rows]
    for (_, _, total, parts), r in zip(sql, rows, strict=True):
        assert total == pytest.approx(r["total_usd"], abs=1e-3)
        assert parts == pytest.approx(total, abs=1e-3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "-5M"], "--tokens must be positive"),
        (["--model", "llama-9-unknown", "--method", "qlora", "--tokens", "5M", "--offline"], "llama-9-unknown"),
        ([*QLORA_8B, "--provider", "seeweb"], "provider 'seeweb' has no published billing, storage or egress terms"),
        ([*QLORA_8B, "--provider", "nosuchcloud"], "provider 'nosuchcloud' has no published"),
        ([*QLORA_8B, "--spot", "--on-demand"], "exclude each other"),
        ([*QLORA_8B, "--epochs", "0"], "--epochs must be positive"),
        ([*QLORA_8B, "--checkpoint-every", "soon"], "--checkpoint-every must be a duration"),
        (["--model", "llama-3.1-8b", "--method", "qlora"], "--tokens is required"),
        ([*QLORA_8B, "--explain", "no-such-offer"], "not among the configurations"),
    ],
)
def test_bad_input_is_one_clear_error_line(cost_db, args, message):
    result = runner.invoke(app, ["cost", *args, "--db", str(cost_db)])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output


def test_unpublished_terms_are_named_and_left_out_of_the_total(cost_db):
    rows = cost_json(cost_db, *QLORA_8B, "--on-demand", "--provider", "azure,aws,gcp,runpod,coreweave", "--top", "500")
    by_provider = {r["provider"]: r for r in rows}
    assert "billing increment" in by_provider["azure"]["unknown"]  # Azure publishes no increment
    assert "storage price" in by_provider["coreweave"]["unknown"] and by_provider["coreweave"]["storage_usd"] is None
    assert by_provider["gcp"]["storage_usd"] > 0  # persistent disk priced from the Billing Catalog (gcp-terms)
    assert by_provider["aws"]["storage_usd"] > 0  # EBS priced from the price list (aws-terms)
    assert by_provider["runpod"]["unknown"] == [] and by_provider["runpod"]["storage_usd"] > 0


def test_storage_uses_the_cheapest_kind_at_the_price_a_small_job_pays(cost_db):
    # RunPod: a volume disk ($0.10 running, $0.20 stopped) or a network volume ($0.07 up to 1 TB,
    # $0.05 above); a 17 GB job kept a week pays the network volume's $0.07.
    rows = cost_json(cost_db, *QLORA_8B, "--on-demand", "--provider", "runpod", "--top", "1")
    result = runner.invoke(app, ["cost", *QLORA_8B, "--on-demand", "--provider", "runpod", "--explain",
                                 rows[0]["offer_id"], "--db", str(cost_db)])  # fmt: skip
    storage = next(line for line in result.stdout.splitlines() if line.startswith("storage"))
    assert "network_volume" in storage and "$0.07/GB-month" in storage


def test_every_fitting_offer_is_costed_or_named_with_its_missing_figure(cost_db):
    from gpucat.cost.rank import CostOptions, job_costs
    from gpucat.memory import TrainSettings, get_model_arch

    con = duckdb.connect(str(cost_db), read_only=True)
    result = job_costs(con, get_model_arch("llama-3.1-8b"), TrainSettings(method="qlora"),
                       CostOptions(tokens=100e6, markets=("on_demand", "spot"), top=1_000_000))  # fmt: skip
    assert result.offers_in > 0
    assert result.costed + len(result.not_costable) == result.offers_in
    assert len(result.rows) == result.costed
    for left in result.not_costable:
        assert set(left) == {"provider", "offer_id", "gpu_model", "missing"} and left["missing"]
    from gpucat.cost.calibration import gpu_rows

    no_tflops = {name for name, row in gpu_rows().items() if not row["bf16_tflops"] and not row["fp16_tflops"]}
    assert {x["gpu_model"] for x in result.not_costable if "TFLOPS" in x["missing"]} <= no_tflops
    assert not {r.gpu_model for r in result.rows} & no_tflops


def test_json_rows_carry_the_likely_ranges_and_near_ties(cost_db):
    rows = cost_json(cost_db, *QLORA_8B, "--top", "50")
    for r in rows:
        assert r["tokens_per_s_per_gpu"] * r["gpus"] == pytest.approx(r["tokens_per_s"], rel=1e-3)
        assert 0 < r["utilization"] <= 1.2
        assert r["hours_range"][0] < r["hours"] < r["hours_range"][1]
        assert r["total_range"][0] < r["total_usd"] < r["total_range"][1]
        assert r["fixed_hours"] > 0  # the model load at least
    ties = [r for r in rows if r["near_tie"]]
    for r in ties:
        assert any(o is not r and o["total_range"][0] <= r["total_range"][1] and r["total_range"][0] <= o["total_range"][1] for o in rows)
