"""Reference tables are validated and written when what they come from changed, not on every refresh."""

from __future__ import annotations

import polars as pl
import pytest

from gpucat import pipeline
from gpucat.schemas.gpu_models import GpuModelRow
from gpucat.schemas.reference import GPU_MODELS_CSV
from gpucat.warehouse import db, reference


@pytest.fixture
def con(tmp_path):
    connection = db.connect(tmp_path / "t.duckdb")
    yield connection
    connection.close()


def test_a_new_warehouse_loads_every_table_then_a_second_refresh_none(con):
    first = pipeline.load_reference(con)
    assert set(first) == {*pipeline.REFERENCE_TABLES, "source_schedules"}
    assert first["gpu_models"] == con.execute("SELECT count(*) FROM gpu_models").fetchone()[0] > 0
    assert pipeline.load_reference(con) == {}


def _never() -> pl.DataFrame:
    raise AssertionError("an unchanged table was built and validated again")


def test_an_unchanged_digest_is_neither_built_nor_validated(con):
    table = reference.csv_reference(GPU_MODELS_CSV, GpuModelRow)
    assert db.load_changed_reference(con, {"gpu_models": table}) == {"gpu_models": table.frame().height}
    assert db.load_changed_reference(con, {"gpu_models": reference.Reference(table.digest, _never)}) == {}


def test_a_changed_file_is_validated_and_reloaded(con, tmp_path):
    csv = tmp_path / "gpu_models.csv"
    csv.write_bytes(GPU_MODELS_CSV.read_bytes())
    db.load_changed_reference(con, {"gpu_models": reference.csv_reference(csv, GpuModelRow)})
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines[:-1]) + "\n")  # the last model removed
    assert db.load_changed_reference(con, {"gpu_models": reference.csv_reference(csv, GpuModelRow)}) == {"gpu_models": len(lines) - 2}
    assert con.execute("SELECT count(*) FROM gpu_models").fetchone()[0] == len(lines) - 2


def test_a_changed_file_that_breaks_its_model_is_refused_and_the_old_rows_stay(con, tmp_path):
    csv = tmp_path / "gpu_models.csv"
    csv.write_bytes(GPU_MODELS_CSV.read_bytes())
    before = db.load_changed_reference(con, {"gpu_models": reference.csv_reference(csv, GpuModelRow)})["gpu_models"]
    header, first, *rest = csv.read_text().splitlines()
    fields = first.split(",")
    fields[header.split(",").index("memory_gb")] = "-80"
    csv.write_text("\n".join([header, ",".join(fields), *rest]) + "\n")
    with pytest.raises(Exception, match="(?i)schema|check|fail"):
        db.load_changed_reference(con, {"gpu_models": reference.csv_reference(csv, GpuModelRow)})
    assert con.execute("SELECT count(*) FROM gpu_models").fetchone()[0] == before


def test_rows_loaded_without_a_digest_are_reloaded_from_the_file_next_time(con):
    pipeline.load_reference(con)
    odd = con.execute("SELECT * FROM source_schedules LIMIT 1").pl()
    db.load_reference(con, {"source_schedules": odd})
    assert con.execute("SELECT count(*) FROM source_schedules").fetchone()[0] == 1
    assert set(pipeline.load_reference(con)) == {"source_schedules"}
    assert con.execute("SELECT count(*) FROM source_schedules").fetchone()[0] > 1


def test_rows_edited_by_hand_are_restored_by_the_next_refresh(con):
    pipeline.load_reference(con)
    budgets = con.execute("SELECT source, stale_after_hours FROM source_schedules ORDER BY source").fetchall()
    con.execute("UPDATE source_schedules SET stale_after_hours = 1e9")
    assert set(pipeline.load_reference(con)) == {"source_schedules"}
    assert con.execute("SELECT source, stale_after_hours FROM source_schedules ORDER BY source").fetchall() == budgets


def test_a_cached_validation_serves_the_next_new_warehouse_with_the_same_rows(tmp_path):
    cache = tmp_path / "cache"
    first = db.connect(tmp_path / "first.duckdb")
    pipeline.load_reference(first, cache=cache)
    assert sorted(p.name.split("-")[0] for p in cache.glob("*.parquet")) == sorted(p.stem for p, _ in pipeline.REFERENCE_TABLES.values())
    table = reference.csv_reference(GPU_MODELS_CSV, GpuModelRow, cache)
    cached = reference.Reference(table.digest, lambda: reference.cached_frame(next(cache.glob("gpu_models-*.parquet")), _never))
    second = db.connect(tmp_path / "second.duckdb")
    assert db.load_changed_reference(second, {"gpu_models": cached}) == {"gpu_models": table.frame().height}
    pipeline.load_reference(second, cache=cache)
    for table_name in pipeline.REFERENCE_TABLES:
        query = f"SELECT * FROM {table_name} ORDER BY ALL"
        assert second.execute(query).fetchall() == first.execute(query).fetchall()
    first.close()
    second.close()


def test_a_cached_frame_that_cannot_be_read_is_validated_again(tmp_path):
    file = tmp_path / "gpu_models-x.parquet"
    file.write_bytes(b"not parquet")
    frame = reference.cached_frame(file, lambda: GpuModelRow.validate(pl.read_csv(GPU_MODELS_CSV, infer_schema_length=None)))
    assert reference.cached_frame(file, _never).equals(frame)


def test_a_changed_file_misses_the_cache(tmp_path):
    cache, csv = tmp_path / "cache", tmp_path / "gpu_models.csv"
    csv.write_bytes(GPU_MODELS_CSV.read_bytes())
    before = reference.csv_reference(csv, GpuModelRow, cache).frame()
    csv.write_text("\n".join(csv.read_text().splitlines()[:-1]) + "\n")
    assert reference.csv_reference(csv, GpuModelRow, cache).frame().height == before.height - 1


def test_a_new_file_starts_from_the_schema_and_reference_data_of_the_first(tmp_path):
    """A refresh's first new file keeps its migrated, reference-loaded state in the cache
    (db.template_path); the next new file starts as a copy: nothing to migrate or reload, the same
    reference rows, and nothing written after the reference data."""
    from gpucat import pipeline
    from gpucat.warehouse import db

    templates = tmp_path / "cache"
    first = db.writer(tmp_path / "first.duckdb", templates=templates)
    assert isinstance(first, db.FileWriter)
    with first.open() as con:
        assert pipeline.load_reference(con)  # a new file loads every table
        first.reference_loaded(con)
        con.execute("CREATE TABLE written_after (x INTEGER)")
        expected = con.execute("SELECT * FROM gpu_models ORDER BY gpu_model").fetchall()
    assert db.template_path(templates).is_file()
    second = db.writer(tmp_path / "second.duckdb", templates=templates)
    with second.open() as con:
        assert db.pending_migrations(con) == []
        assert pipeline.load_reference(con) == {}  # every digest matches: nothing rebuilt
        assert con.execute("SELECT * FROM gpu_models ORDER BY gpu_model").fetchall() == expected
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'written_after'").fetchone() == (0,)
