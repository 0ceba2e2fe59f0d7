"""`gpucat fit` over the replayed catalog: what fits, at which GPU count, and the same answer in SQL."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.fit import FitOptions, fit
from gpucat.memory import TrainSettings, resolve_model
from gpucat.warehouse import db

runner = CliRunner()


def fit_json(catalog_db, *args: str) -> dict:
    result = runner.invoke(app, ["fit", *args, "--json", "--limit", "1000", "--db", str(catalog_db)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_qlora_70b_fits_single_cards_with_the_need_shown(catalog_db):
    out = fit_json(catalog_db, "--model", "llama-3.1-70b", "--method", "qlora", "--batch", "1", "--seq-len", "2048")
    rows = out["offers"]
    single = [r for r in rows if r["gpus_total"] == 1]
    assert single, "a 70B QLoRA fits one 80 GB card"
    assert {r["gpu_model"] for r in single} >= {"H100-SXM", "A100-SXM4-80GB"}
    for r in rows:
        assert r["need_gb_per_gpu"] == pytest.approx(out["per_gpu_gb"][str(r["gpus_total"])])
        assert r["need_gb_per_gpu"] <= r["gpu_memory_gb"] * 0.9
    assert [r["usd_per_hour_total"] for r in rows] == sorted(r["usd_per_hour_total"] for r in rows)


def test_full_70b_lists_only_multi_gpu_configurations(catalog_db):
    out = fit_json(
        catalog_db, "--model", "llama-3.1-70b", "--method", "full", "--precision", "bf16-mixed",
        "--sharding", "fsdp", "--batch", "1", "--seq-len", "2048",
    )  # fmt: skip
    rows = out["offers"]
    assert rows
    assert min(r["gpus_total"] for r in rows) >= 8
    multi_node = [r for r in rows if r["nodes"] > 1]
    assert multi_node and all(r["fabric"] in ("efa", "infiniband") for r in multi_node)
    assert all(f"{r['nodes']} nodes over {r['fabric']}" in r["notes"] for r in multi_node)


def test_each_offer_appears_at_its_smallest_fitting_gpu_count(catalog_db):
    rows = fit_json(catalog_db, "--model", "llama-3.1-70b", "--method", "full", "--sharding", "fsdp")["offers"]
    ids = [(r["provider"], r["offer_id"]) for r in rows]
    assert len(ids) == len(set(ids))


def test_cli_and_sql_macro_agree(catalog_db):
    out = fit_json(catalog_db, "--model", "llama-3.1-8b", "--method", "lora", "--sharding", "none", "--batch", "2")
    need = out["per_gpu_gb"]["1"]
    with db.connect(catalog_db, read_only=True) as con:
        sql = {tuple(r) for r in con.execute("SELECT provider, offer_id FROM fit_offers(per_gpu_gb := $need, gpus := 1)", {"need": need}).fetchall()}
    assert {(r["provider"], r["offer_id"]) for r in out["offers"]} == sql


def test_cards_without_bf16_or_4bit_kernels_get_a_note(catalog_db):
    arch = resolve_model("llama-3.2-1b", allow_hub=False)
    settings = TrainSettings(method="qlora", batch_size=1, seq_len=512, sharding="none")
    with db.connect(catalog_db, read_only=True) as con:
        rows = fit(con, arch, settings, FitOptions(limit=1000)).rows
    t4 = [r for r in rows if r["gpu_model"] == "T4"]
    assert t4 and all("no bf16 on this GPU: use --precision fp16-mixed or fp32" in r["notes"] for r in t4)
    h100 = [r for r in rows if r["gpu_model"] == "H100-SXM" and r["gpus_total"] == 1]
    assert h100 and all(not any("bf16" in n for n in r["notes"]) for r in h100)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--headroom", "1.5"], "--headroom must be a fraction"),
        (["--max-gpus", "0"], "--max-gpus must be at least 1"),
        (["--spot", "--on-demand"], "exclude each other"),
        (["--method", "sideways"], "method"),
    ],
)
def test_bad_fit_options(catalog_db, args, message):
    base = ["fit", "--model", "llama-3.1-8b", "--db", str(catalog_db)]
    if "--method" not in args:
        base += ["--method", "lora"]
    result = runner.invoke(app, base + args)
    assert result.exit_code != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_fit_table_output(catalog_db):
    result = runner.invoke(app, ["fit", "--model", "llama-3.1-8b", "--method", "qlora", "--sharding", "none", "--db", str(catalog_db)])
    assert result.exit_code == 0
    assert "memory per GPU (none) 1 GPU:" in result.stdout


CROSSING_JOBS = [TrainSettings(method="qlora", batch_size=b, seq_len=2048, sharding="none") for b in (1, 2, 4, 8, 16)]


@pytest.mark.parametrize("risk", ["safe", "likely"])
def test_each_row_is_decided_against_the_band_and_tight_where_it_crosses(catalog_db, risk):
    """safe: fits only when the band's top fits; listed as tight when only the estimate fits.
    likely: fits when the estimate fits; tight when only the band's low end fits. No row whose
    band crosses its usable memory is a clean fit under safe."""
    arch = resolve_model("llama-3.1-8b", allow_hub=False)
    seen = set()
    with db.connect(catalog_db, read_only=True) as con:
        for settings in CROSSING_JOBS:
            result = fit(con, arch, settings, FitOptions(limit=1000, risk=risk))
            e = result.estimates[1]
            assert e.per_gpu_gb_low <= e.per_gpu_gb <= e.per_gpu_gb_high
            listed_from, fits_from = (e.per_gpu_gb, e.per_gpu_gb_high) if risk == "safe" else (e.per_gpu_gb_low, e.per_gpu_gb)
            for r in result.rows:
                usable = r["usable_gb_per_gpu"]
                assert usable >= listed_from
                assert r["fit"] == ("fits" if fits_from <= usable else "tight")
                assert r["need_gb_per_gpu"] == e.per_gpu_gb
                if risk == "safe" and e.per_gpu_gb_high > usable:
                    assert r["fit"] == "tight"
                    assert f"tight: error band reaches {e.per_gpu_gb_high:.1f} GB, {usable:.1f} GB usable" in r["notes"]
                seen.add(r["fit"])
    assert seen == {"fits", "tight"}


def test_likely_lists_what_safe_leaves_out_and_safe_marks_what_likely_calls_a_fit(catalog_db):
    arch = resolve_model("llama-3.1-8b", allow_hub=False)
    with db.connect(catalog_db, read_only=True) as con:
        for settings in CROSSING_JOBS:
            safe = {(r["provider"], r["offer_id"]): r["fit"] for r in fit(con, arch, settings, FitOptions(limit=1000)).rows}
            likely = {(r["provider"], r["offer_id"]): r["fit"] for r in fit(con, arch, settings, FitOptions(limit=1000, risk="likely")).rows}
            assert set(safe) <= set(likely)
            assert all(likely[k] == "fits" for k, v in safe.items())  # listed under safe: the estimate fits
            assert {k for k, v in safe.items() if v == "fits"} <= {k for k, v in likely.items() if v == "fits"}


def test_bad_risk_is_one_error_line(catalog_db):
    result = runner.invoke(app, ["fit", "--model", "llama-3.1-8b", "--method", "qlora", "--risk", "yolo", "--db", str(catalog_db)])
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == "error: --risk must be one of safe, likely, got 'yolo'"


def test_fit_json_gives_the_band_high_end_per_gpu_count(catalog_db):
    out = fit_json(catalog_db, "--model", "llama-3.1-8b", "--method", "qlora", "--sharding", "none", "--batch", "2")
    assert set(out["per_gpu_gb_high"]) == set(out["per_gpu_gb_low"]) == set(out["per_gpu_gb"]) == {"1"}
    assert out["per_gpu_gb_low"]["1"] <= out["per_gpu_gb"]["1"] < out["per_gpu_gb_high"]["1"]
    assert out["risk"] == "safe"
    assert all(r["fit"] in ("fits", "tight") for r in out["offers"])
    for r in out["offers"]:  # safe: a clean fit holds the band's top
        assert (r["fit"] == "fits") == (out["per_gpu_gb_high"]["1"] <= r["usable_gb_per_gpu"])
    likely = fit_json(catalog_db, "--model", "llama-3.1-8b", "--method", "qlora", "--sharding", "none", "--batch", "2",
                      "--risk", "likely")
    assert likely["risk"] == "likely" and len(likely["offers"]) >= len(out["offers"])


@pytest.mark.parametrize(
    ("options", "max_gpus", "message", "flagged"),
    [
        (FitOptions(risk="yolo"), 8, "risk must be one of safe, likely, got 'yolo'", "--risk must be one of safe, likely, got 'yolo'"),
        (FitOptions(headroom=1.5), 8, "headroom must be a fraction in [0, 1), got 1.5", "--headroom must be a fraction in [0, 1), got 1.5"),
        (FitOptions(max_gpus=0), 0, "maximum GPU count must be at least 1, got 0", "--max-gpus must be at least 1, got 0"),
    ],
)
def test_fit_errors_name_the_quantity_and_the_cli_its_flag(catalog_db, options, max_gpus, message, flagged):
    from gpucat.cli._common import error_line
    from gpucat.schemas.errors import SettingError

    arch = resolve_model("llama-3.1-8b", allow_hub=False)
    with db.connect(catalog_db, read_only=True) as con, pytest.raises(SettingError) as err:
        fit(con, arch, TrainSettings(method="qlora", sharding="fsdp"), options)
    assert (str(err.value), error_line(err.value)) == (message, flagged)
    result = runner.invoke(app, ["fit", "--model", "llama-3.1-8b", "--method", "qlora", "--sharding", "fsdp", "--risk", options.risk,
                                 "--headroom", str(options.headroom), "--max-gpus", str(max_gpus), "--db", str(catalog_db)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {flagged}"
