"""Output shapes and filters of the read-side commands, over the replayed fixtures."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpucat import pipeline
from gpucat.cli import app
from gpucat.schemas.records import Offer, Rejected
from gpucat.scrapers import all_sources
from tests.conftest import FIXTURES, fixture_files, fixture_pages
from tests.drift_checks import fixture_rates

runner = CliRunner()
SOURCES = sorted(all_sources())
OFFER_PROVIDERS = sorted({s.provider for s in all_sources().values() if "offers" in s.tables})


def invoke_json(*args: str):
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_offers_json_columns_and_order(catalog_db):
    rows = invoke_json("offers", "--json", "--limit", "100000", "--db", str(catalog_db))
    assert set(rows[0]) == {
        "provider", "instance_type", "region", "market", "tier", "gpu_model", "gpu_count", "gpu_memory_gb", "vcpus",
        "ram_gb", "usd_per_hour", "usd_per_gpu_hour", "currency", "availability", "available_count", "interconnect",
        "fabric", "fabric_gbps", "offer_id", "source", "source_url", "scraped_at", "age_hours", "is_stale", "replayed",
    }  # fmt: skip
    prices = [r["usd_per_gpu_hour"] for r in rows]
    assert prices == sorted(prices)
    assert {r["provider"] for r in rows} == set(OFFER_PROVIDERS)


@pytest.mark.parametrize(
    ("args", "check"),
    [
        (["--gpu", "H100"], lambda r: r["gpu_model"] in ("H100-SXM", "H100-PCIe", "H100-NVL", "H100-80GB-AnyForm")),  # the family's stand-in too
        (["--gpu", "h100-sxm,A100-SXM4-80GB"], lambda r: r["gpu_model"] in ("H100-SXM", "A100-SXM4-80GB")),
        (["--provider", OFFER_PROVIDERS[-1]], lambda r: r["provider"] == OFFER_PROVIDERS[-1]),
        (["--min-gpu-memory", "80"], lambda r: r["gpu_memory_gb"] >= 80),
        (["--max-price", "1.5"], lambda r: r["usd_per_gpu_hour"] <= 1.5),
        (["--spot"], lambda r: r["market"] == "spot"),
        (["--on-demand"], lambda r: r["market"] == "on_demand"),
        (["--available"], lambda r: r["availability"] != "unavailable"),  # unknown stock stays
    ],
    ids=["family", "models", "provider", "memory", "price", "spot", "on-demand", "available"],
)
def test_offers_filters(catalog_db, args, check):
    everything = invoke_json("offers", "--json", "--limit", "1000", "--db", str(catalog_db))
    rows = invoke_json("offers", *args, "--json", "--limit", "1000", "--db", str(catalog_db))
    assert rows and all(check(r) for r in rows)
    assert len(rows) == len([r for r in everything if check(r)])


def test_offers_table_output(catalog_db):
    [cheapest] = invoke_json("offers", "--gpu", "H100", "--on-demand", "--json", "--limit", "1", "--db", str(catalog_db))
    result = runner.invoke(app, ["offers", "--gpu", "H100", "--on-demand", "--limit", "1", "--db", str(catalog_db)], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    assert cheapest["instance_type"] in result.stdout and f"{cheapest['usd_per_hour']:g}" in result.stdout


def test_status_json(catalog_db):
    rows = {r["source"]: r for r in invoke_json("status", "--json", "--db", str(catalog_db))}
    assert sorted(rows) == SOURCES
    # A fallback is skipped while its primary loads (one truth per provider).
    fallbacks = {s.name for s in all_sources().values() if s.fallback_for}
    assert {n: r["status"] for n, r in rows.items()} == {n: "skipped" if n in fallbacks else "ok" for n in SOURCES}


@pytest.mark.parametrize("name", [n for n in SOURCES if not all_sources()[n].fallback_for])  # a skipped fallback parses nothing
def test_status_counts_and_unknown_gpus_match_the_sources_own_parse(catalog_db, name):
    row = {r["source"]: r for r in invoke_json("status", "--json", "--db", str(catalog_db))}[name]
    source = all_sources()[name]
    pages = fixture_pages(name)
    [batch] = pipeline.validate_sources([(source, pipeline.parse_source(source, pages, fixture_rates(FIXTURES)), len(pages))])
    rejected = [r for b in batch.batches for r in b.rejected]
    unknown = sorted({r.reasons[0].split(": ", 1)[1].strip("'") for r in rejected if r.reasons[0].startswith("unknown_gpu")})
    assert (row["rows_valid"], row["rows_rejected"]) == (sum(b.frame.height for b in batch.batches), len(rejected))
    assert row["unknown_gpus"] == unknown
    assert row["rows_skipped"] == batch.skipped
    assert row["unmapped_rows"] == len([r for r in rejected if any(x.startswith("unknown_") for x in r.reasons)])


def test_sql_formats(catalog_db):
    query = "SELECT provider, count(*) AS n FROM current_offers GROUP BY provider ORDER BY provider"
    as_csv = runner.invoke(app, ["sql", query, "--format", "csv", "--db", str(catalog_db)])
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [r["provider"] for r in rows] == OFFER_PROVIDERS
    as_json = invoke_json("sql", query, "--format", "json", "--db", str(catalog_db))
    assert [r["provider"] for r in as_json] == OFFER_PROVIDERS
    assert [int(r["n"]) for r in rows] == [r["n"] for r in as_json]


def test_fit_macro_is_usable_from_plain_sql(catalog_db):
    rows = invoke_json(
        "sql",
        "SELECT provider, instance_type, gpu_count, nodes, gpu_memory_gb, fabric FROM fit_offers(per_gpu_gb := 150, gpus := 16) "
        "ORDER BY usd_per_hour_total",
        "--format", "json", "--db", str(catalog_db),
    )  # fmt: skip
    # 150 GB per GPU on 16 GPUs (10% headroom): nodes with a multi-node fabric and >= 166.7 GB cards.
    assert rows and all(r["nodes"] * r["gpu_count"] == 16 for r in rows)
    assert all(r["gpu_memory_gb"] * 0.9 >= 150 and (r["nodes"] == 1 or r["fabric"]) for r in rows)


@pytest.mark.parametrize("name", SOURCES)
def test_parse_prints_json_lines_with_a_table_field(name):
    files = fixture_files(name)
    result = runner.invoke(app, ["parse", name, *map(str, files)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    source = all_sources()[name]
    expected = pipeline.parse_source(source, fixture_pages(name))
    assert len(lines) == len(expected)
    assert {line["table"] for line in lines} == {"rejected_rows" if isinstance(i, Rejected) else i.table for i in expected}
    urls = {p.url for p in fixture_pages(name)}
    assert all(line["source_url"] in urls for line in lines if line["table"] != "rejected_rows")


def test_export_writes_a_verifiable_snapshot(catalog_db, tmp_path):
    out = invoke_json("export", "--out", str(tmp_path / "snaps"), "--json", "--db", str(catalog_db))
    names = {r["name"]: r for r in out["relations"]}
    assert {"current_offers", "offer_versions", "scrape_runs", "rejected_rows", "gpu_models", "interruption_rates"} <= set(names)
    snapshot = tmp_path / "snaps" / f"snapshot={out['snapshot']}"
    assert (snapshot / "current_offers.parquet").is_file()
    assert invoke_json("export", "--verify", str(snapshot), "--json")["ok"] is True

    (snapshot / "scrape_runs.parquet").write_bytes(b"not parquet any more")
    result = runner.invoke(app, ["export", "--verify", str(snapshot)])
    assert result.exit_code == 1
    assert "scrape_runs.parquet: sha256 differs" in result.stdout


def test_export_snapshots_read_as_hive_partitions_with_their_time(catalog_db, tmp_path):
    """polars reads the snapshot folder as a UTC datetime partition (no try_parse_hive_dates=False)."""
    from datetime import UTC, datetime

    import polars as pl

    from gpucat.export import export_snapshot
    from gpucat.warehouse import db

    taken = datetime(2026, 12, 2, 1, 24, 6, tzinfo=UTC)
    with db.connect(catalog_db, read_only=True) as con:
        export_snapshot(con, tmp_path / "snaps", now=taken)
        export_snapshot(con, tmp_path / "snaps", now=datetime(2026, 12, 3, tzinfo=UTC))
    frame = pl.scan_parquet(tmp_path / "snaps" / "*" / "scrape_runs.parquet", hive_partitioning=True).collect()
    assert frame.schema["snapshot"] == pl.Datetime("us", "UTC")
    assert sorted(set(frame["snapshot"].to_list())) == [taken, datetime(2026, 12, 3, tzinfo=UTC)]


def test_export_is_deterministic_for_the_same_data(catalog_db, tmp_path):
    from datetime import UTC, datetime

    from gpucat.export import export_snapshot
    from gpucat.warehouse import db

    copy = tmp_path / "copy.duckdb"
    shutil.copy(catalog_db, copy)
    with db.connect(copy, read_only=True) as con:
        a = export_snapshot(con, tmp_path / "a", now=datetime(2026, 11, 30, tzinfo=UTC))
        b = export_snapshot(con, tmp_path / "b", now=datetime(2026, 11, 30, tzinfo=UTC))
    assert [r["sha256"] for r in a.manifest["relations"]] == [r["sha256"] for r in b.manifest["relations"]]


def test_export_verify_sees_extra_and_removed_files_and_a_truncated_manifest(catalog_db, tmp_path):
    out = invoke_json("export", "--out", str(tmp_path / "snaps"), "--json", "--db", str(catalog_db))
    snapshot = tmp_path / "snaps" / f"snapshot={out['snapshot']}"
    (snapshot / "extra.parquet").write_bytes(b"PAR1")
    manifest = json.loads((snapshot / "manifest.json").read_text())
    dropped = manifest["relations"].pop()
    (snapshot / dropped["file"]).unlink()
    (snapshot / "manifest.json").write_text(json.dumps(manifest))
    result = runner.invoke(app, ["export", "--verify", str(snapshot)])
    assert result.exit_code == 1
    assert "extra.parquet: not in the manifest" in result.stdout
    assert "relations list was edited" in result.stdout

    (snapshot / "manifest.json").write_text(json.dumps(manifest)[:40])
    result = runner.invoke(app, ["export", "--verify", str(snapshot)])
    assert result.exit_code == 1 and "manifest.json: unreadable" in result.stdout


@pytest.mark.parametrize("where", ["a-file", "unwritable"])
def test_export_to_a_bad_place_is_one_error_line_and_leaves_nothing(catalog_db, tmp_path, where):
    if where == "a-file":
        out = tmp_path / "file"
        out.write_text("x")
    else:
        out = Path("/proc/gpucat-snapshots")  # not writable, even for root
    result = runner.invoke(app, ["export", "--out", str(out), "--db", str(catalog_db)])
    assert result.exit_code != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")


def test_a_failed_export_leaves_no_partial_snapshot(catalog_db, tmp_path, monkeypatch):
    import gpucat.export as export

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(export.pq, "write_table", boom)
    from gpucat.schemas.errors import GpucatError
    from gpucat.warehouse import db

    with db.connect(catalog_db, read_only=True) as con, pytest.raises(GpucatError, match="cannot write the snapshot under .*: disk full"):
        export.export_snapshot(con, tmp_path / "snaps")
    assert list((tmp_path / "snaps").iterdir()) == []


def test_parse_converts_other_currencies_with_the_rates_of_a_warehouse(catalog_db):
    """Without --db a non-USD price cannot be converted; with one, it is, and says which day's rate."""
    name = next(n for n in SOURCES if any(isinstance(i, Offer) and i.currency != "USD" for i in pipeline.parse_source(all_sources()[n], fixture_pages(n), fixture_rates(FIXTURES))))
    files = [str(f) for f in fixture_files(name)]
    bare = [json.loads(line) for line in runner.invoke(app, ["parse", name, *files]).stdout.splitlines()]
    assert any("no_exchange_rate" in r for line in bare if line["table"] == "rejected_rows" for r in line["reasons"])
    rated = [json.loads(line) for line in runner.invoke(app, ["parse", name, *files, "--db", str(catalog_db)]).stdout.splitlines()]
    converted = [line for line in rated if line["table"] == "offers" and line["currency"] != "USD"]
    assert converted and all(line["fx_rate_date"] and line["usd_per_hour"] > 0 for line in converted)


def test_export_reads_one_snapshot_while_a_refresh_commits(catalog_db, tmp_path, monkeypatch):
    """A run committed after the export began is in none of its files, even ones written later."""
    import shutil

    import pyarrow.parquet as pq

    from gpucat import export
    from gpucat.warehouse import db

    path = tmp_path / "g.duckdb"
    shutil.copy(catalog_db, path)
    con = db.connect(path)
    other = con.cursor()  # another session of the same database, as a refresh would be
    runs_before = con.execute("SELECT count(*) FROM scrape_runs").fetchone()[0]
    real_write = pq.write_table
    calls = []

    def write_then_commit_a_run(table, where, **kwargs):
        if not calls:
            other.execute("INSERT INTO scrape_runs (run_id, source, provider, status, started_at, finished_at) "
                          "SELECT 'late-run', source, provider, 'ok', now(), now() FROM scrape_runs LIMIT 1")  # fmt: skip
        calls.append(where)
        return real_write(table, where, **kwargs)

    monkeypatch.setattr(pq, "write_table", write_then_commit_a_run)
    snapshot = export.export_snapshot(con, tmp_path / "snaps")
    assert con.execute("SELECT count(*) FROM scrape_runs").fetchone()[0] == runs_before + 1  # it did commit
    assert [p.name for p in calls].index("scrape_runs.parquet") > 0
    assert pq.read_table(snapshot.path / "scrape_runs.parquet").num_rows == runs_before
    con.close()


def test_parse_with_a_warehouse_warns_when_its_nearest_rate_is_over_a_week_older(catalog_db, tmp_path):
    """A body outside its capture folder is dated by its file time (today): the fixtures' 2024 rate is too old for it."""
    name = "seeweb"  # its parser needs nothing from the URL, so a bare copy parses
    copies = []
    for path in fixture_files(name):
        copies.append(tmp_path / path.name)
        shutil.copy(path, copies[-1])
    result = runner.invoke(app, ["parse", name, *map(str, copies), "--db", str(catalog_db)])
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: stale_exchange_rate: EUR rate of 2024-06-28 is ")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert not [line for line in lines if line["table"] == "offers"]
    assert {r.split(" rate of ")[0] for line in lines if line["table"] == "rejected_rows" for r in line["reasons"] if "exchange_rate" in r} == {"stale_exchange_rate: EUR"}
    # In its capture folder the same body is dated by its manifest, three days after the rate: no warning.
    fresh = runner.invoke(app, ["parse", name, *map(str, fixture_files(name)), "--db", str(catalog_db)])
    assert "warning:" not in fresh.stderr
