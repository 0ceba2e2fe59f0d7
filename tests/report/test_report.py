"""`gpucat report`: one self-contained page, every chart drawn in a real (headless) browser."""

from __future__ import annotations

import io
import os
import re

import pytest
from typer.testing import CliRunner

from gpucat import report
from gpucat.cli import app
from gpucat.warehouse.db import connect
from tests.report.browser import find_chromium, load_page

runner = CliRunner()
CHARTS = ["chart-spread", "chart-vram", "chart-availability", "chart-history"]
JOB = ["--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "200M"]
JOB_CHARTS = ["chart-fit", "chart-cost"]


@pytest.fixture(scope="module")
def job_report(catalog_db, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = runner.invoke(app, ["report", "--out", str(out), "--db", str(catalog_db), *JOB])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"wrote {out}")
    return out


def test_the_page_is_self_contained(job_report):
    page = job_report.read_text(encoding="utf-8")
    # Nothing is loaded from elsewhere: no external scripts, styles, images or frames.
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=", page, re.I)
    assert page.count("<script") >= len(CHARTS) + 2  # plotly.js inline, then one per chart
    for div in [*CHARTS, *JOB_CHARTS]:
        assert f'id="{div}"' in page
    assert "200,000,000 training tokens" in page  # the cost section says what it priced


def test_headline_has_the_cheapest_offer_of_each_model(catalog_db):
    with connect(catalog_db, read_only=True) as con:
        data = report.collect(con)
        cheapest = dict(con.execute(
            "SELECT gpu_model, min(usd_per_gpu_hour) FROM current_offers WHERE market = 'on_demand' AND usd_per_gpu_hour > 0 GROUP BY 1"
        ).fetchall())  # fmt: skip
    rows = {r["gpu_model"]: r for r in report.headline(data.spread)}
    assert {m: r["on_demand_usd_per_gpu_hour"] for m, r in rows.items() if r["on_demand_usd_per_gpu_hour"]} == pytest.approx(cheapest)
    markdown = report.headline_markdown(list(rows.values()))
    assert all(f"| {model} |" in markdown for model in cheapest)


def test_a_job_without_tokens_is_ranked_by_hourly_price_only(catalog_db, tmp_path):
    out = tmp_path / "fit-only.html"
    result = runner.invoke(app, ["report", "--out", str(out), "--db", str(catalog_db), *JOB[:4]])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert 'id="chart-fit"' in page and 'id="chart-cost"' not in page and "give --tokens" in page


def test_report_without_a_job_has_no_fit_section(catalog_db, tmp_path):
    out = tmp_path / "plain.html"
    result = runner.invoke(app, ["report", "--out", str(out), "--db", str(catalog_db), "--json"])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert all(f'id="{div}"' in page for div in CHARTS) and 'id="chart-fit"' not in page


DRAWN = """(() => {
  const divs = [...document.querySelectorAll('.plotly-graph-div')];
  const drawn = divs.filter(d => d.querySelector('svg.main-svg') && d._fullData && d._fullData.length);
  return {ids: divs.map(d => d.id), drawn: drawn.map(d => d.id), tables: document.querySelectorAll('table tbody tr').length};
})()"""


def test_the_report_opens_offline_in_chromium_without_errors(job_report, tmp_path):
    binary = find_chromium()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the browser test: .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (CI installs Debian's package in .ci/run)")
    run = load_page(binary, job_report, tmp_path / "profile", evaluate=DRAWN)
    assert run.errors == []
    assert [u for u in run.requests if not u.startswith(("file:", "data:", "about:"))] == []
    assert sorted(run.evaluated["drawn"]) == sorted([*CHARTS, *JOB_CHARTS]) and run.evaluated["tables"] > 10
    shot = tmp_path / "report.png"
    shot.write_bytes(run.screenshot)
    assert_not_blank(run.screenshot)


def assert_not_blank(png: bytes) -> None:
    """A drawn page has many colours and real contrast; a blank or failed one has neither."""
    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.width >= 800 and image.height >= 1000, image.size
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 200, f"only {len(colours)} colours"
    assert max(ImageStat.Stat(image.convert("L")).stddev) > 20
