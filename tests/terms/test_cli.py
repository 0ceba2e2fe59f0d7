"""`gpucat providers`: the table, the JSON, the filter and the one-line error."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gpucat.cli import app

runner = CliRunner()


def test_table_lists_every_provider_side_by_side(catalog_db):
    result = runner.invoke(app, ["providers", "--db", str(catalog_db)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    for provider in ("aws", "runpod", "vultr", "modal", "coreweave"):
        assert provider in text
    assert "1 s (min 1 min)" in text  # AWS: per second, 60 s minimum
    assert "yes, 5 s notice, disk kept" in text  # RunPod spot


def test_json_is_the_full_terms_with_evidence(catalog_db):
    result = runner.invoke(app, ["providers", "--json", "-p", "runpod,vast", "--db", str(catalog_db)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["provider"] for r in rows] == ["runpod", "vast"]
    runpod = rows[0]
    assert runpod["billing_increment_s"] == 60 and runpod["verified_on"] == "2026-12-01"
    assert {"storage", "egress", "evidence", "source_url", "stale"} <= set(runpod)
    volume = next(s for s in runpod["storage"] if s["kind"] == "volume")
    assert (volume["usd_per_gb_month"], volume["usd_per_gb_month_stopped"], volume["persists_on_stop"]) == (0.1, 0.2, True)


def test_unknown_provider_is_one_error_line(catalog_db):
    result = runner.invoke(app, ["providers", "-p", "nope", "--db", str(catalog_db)])
    assert result.exit_code != 0
    assert result.output.strip().startswith("error: unknown provider 'nope'")
