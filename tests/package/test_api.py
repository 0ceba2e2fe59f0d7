"""The Python API (README "Python API"): each function answers what its command answers, opens the
default database by itself, and every example in the README runs against a replayed catalog."""

from __future__ import annotations

import contextlib
import io
import json
import re
from dataclasses import asdict, fields

import polars as pl
import pytest
from typer.testing import CliRunner

import gpucat
from gpucat.api import FitRow, OfferRow
from gpucat.cli import app
from gpucat.cost.rank import CostRow
from gpucat.memory import MemoryEstimate
from gpucat.schemas.errors import UserInputError
from tests.conftest import ROOT
from tests.test_first_run import YEAR_ON

JOB = {"model": "llama-3.1-8b", "method": "qlora"}


@pytest.fixture
def default_db(catalog_db, monkeypatch):
    """The replayed catalog as the default database ($GPUCAT_DB), read a year after its capture."""
    monkeypatch.setenv("GPUCAT_DB", str(catalog_db))
    monkeypatch.setenv("GPUCAT_NOW", YEAR_ON.isoformat())
    return catalog_db


def cli_json(*args: str, db) -> object:
    result = CliRunner().invoke(app, [*args, "--db", str(db), "--json"], env={"GPUCAT_NOW": YEAR_ON.isoformat()})
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def readme_examples() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = re.search(r"^## Python API\n(.*?)^## ", readme, re.S | re.M)
    assert section, "README has no '## Python API' section"
    return re.findall(r"```python\n(.*?)```", section.group(1), re.S)


def test_the_readme_shows_each_function():
    text = "\n".join(readme_examples())
    assert [name for name in gpucat.API if f"gpucat.{name}(" in text] == list(gpucat.API)


@pytest.mark.parametrize("example", readme_examples(), ids=lambda e: e.splitlines()[2][2:40])
def test_each_readme_example_runs(default_db, example):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, "README.md", "exec"), {})  # noqa: S102 - the README's own code
    printed = [line for line in out.getvalue().splitlines() if line.strip()]
    assert len(printed) >= example.count("print(")  # every print ran; loops print at least once


def test_offers_are_the_commands_offers(default_db):
    rows = gpucat.offers(gpu="H100", market="on_demand", limit=10)
    assert rows and all(isinstance(r, OfferRow) for r in rows)
    listed = cli_json("offers", "--gpu", "H100", "--on-demand", "--limit", "10", db=default_db)
    assert [{**asdict(r), "scraped_at": str(r.scraped_at)} for r in rows] == listed


def test_offer_row_is_the_querys_columns(default_db):
    from gpucat import catalog
    from gpucat.warehouse.db import connect

    with connect(default_db, read_only=True) as con:
        columns = catalog.offers(con, limit=1).columns
    assert [f.name for f in fields(OfferRow)] == columns


def test_as_frame_holds_the_same_rows(default_db):
    rows = gpucat.offers(provider="aws,runpod", limit=None)
    frame = gpucat.offers(provider=["aws", "runpod"], limit=None, as_frame=True)
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == [f.name for f in fields(OfferRow)]
    assert frame.select("provider", "offer_id").rows() == [(r.provider, r.offer_id) for r in rows]
    assert set(frame["provider"]) == {"aws", "runpod"}


def test_db_argument_wins_over_the_environment(catalog_db, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUCAT_DB", str(tmp_path / "absent.duckdb"))
    with pytest.raises(Exception, match="no database at"):
        gpucat.offers(limit=1)
    assert len(gpucat.offers(limit=3, db=catalog_db)) == 3


def test_fit_is_the_commands_fit(default_db):
    rows = gpucat.fit(**JOB, batch=4, limit=8)
    assert rows and all(isinstance(r, FitRow) for r in rows)
    answer = cli_json("fit", "--model", "llama-3.1-8b", "--method", "qlora", "--batch", "4", "--limit", "8", db=default_db)
    assert [(r.provider, r.offer_id, r.gpus_total, r.fit, r.need_gb_per_gpu, r.notes) for r in rows] == [
        (r["provider"], r["offer_id"], r["gpus_total"], r["fit"], r["need_gb_per_gpu"], r["notes"]) for r in answer["offers"]
    ]
    assert gpucat.fit(**JOB, batch=4, limit=8, as_frame=True)["offer_id"].to_list() == [r.offer_id for r in rows]


def test_cost_is_the_commands_cost(default_db):
    rows = gpucat.cost(**JOB, tokens="100M", market="both", top=6)
    assert rows and all(isinstance(r, CostRow) for r in rows)
    answer = cli_json("cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M", "--both", "--top", "6", db=default_db)
    assert [row.as_json() for row in rows] == [{k: v for k, v in r.items() if k not in ("id", "replayed", "data_age_hours")}
                                               for r in answer]  # fmt: skip
    frame = gpucat.cost(**JOB, tokens=1e8, market="both", top=6, as_frame=True)
    assert frame["total_usd"].to_list() == [r["total_usd"] for r in answer]


def test_memory_is_the_commands_memory():
    estimate = gpucat.memory(**JOB, batch=4, seq_len=4096)
    assert isinstance(estimate, MemoryEstimate)
    result = CliRunner().invoke(app, ["memory", "--model", "llama-3.1-8b", "--method", "qlora", "--batch", "4", "--seq-len", "4096", "--json"])
    shown = json.loads(result.stdout)
    assert (estimate.per_gpu_gb, estimate.breakdown) == (shown["per_gpu_gb"], shown["breakdown"])
    frame = gpucat.memory(**JOB, batch=4, seq_len=4096, as_frame=True)
    assert dict(frame.rows()) == estimate.breakdown


def test_library_modules_stay_modules():
    """`gpucat.fit`, `gpucat.cost` and `gpucat.memory` are both the API function and the module."""
    from gpucat.cost.rank import CostOptions
    from gpucat.fit import FitOptions

    assert (gpucat.fit.FitOptions, gpucat.cost.rank.CostOptions) == (FitOptions, CostOptions)
    assert gpucat.memory.estimate_memory.__module__ == "gpucat.memory.estimator"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gpucat.offers(market="preemptible"), "market must be"),
        (lambda: gpucat.offers(gpu="H1000"), "GPU model or family"),
        (lambda: gpucat.offers(provider="nope"), "nope"),
        (lambda: gpucat.offers(limit=0), "limit must be"),
        (lambda: gpucat.fit(model="llama-3.1-8b"), "^method is required"),
        (lambda: gpucat.fit(**JOB, risk="bold"), "^risk must be"),
        (lambda: gpucat.cost(**JOB, tokens="lots"), "tokens"),
        (lambda: gpucat.cost(**JOB, tokens="1M", market="any"), "market must be"),
        (lambda: gpucat.memory(model="llama-3.1-8b", method="sft"), "method"),
    ],
)
def test_bad_values_are_user_errors(default_db, call, message):
    with pytest.raises(UserInputError, match=message):
        call()


def test_an_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="seqlen"):
        gpucat.memory(**JOB, seqlen=2048)


def test_a_bad_clock_is_a_user_error(default_db, monkeypatch):
    monkeypatch.setenv("GPUCAT_NOW", "yesterday")
    with pytest.raises(UserInputError, match="GPUCAT_NOW"):
        gpucat.offers(limit=1)
