"""The report's price history (report_history.sql): the cheapest price per model and market at each
change in the window, as a brute-force sweep over every version computes it."""

from __future__ import annotations

import random
import shutil
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from gpucat import report
from gpucat.warehouse.db import query_sql

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def brute_force(con, models, since, until):
    """At every start and end of a version in the window, the least price of the versions valid then;
    kept where it changes, at the window's start and at its end."""
    rows = con.execute(
        "SELECT gpu_model, market, usd_per_gpu_hour, valid_from, valid_to FROM offer_versions"
        " WHERE usd_per_gpu_hour > 0 AND list_contains($models, gpu_model) AND valid_from <= $until"
        " AND (valid_to IS NULL OR valid_to > $since)",
        {"models": models, "since": since, "until": until},
    ).fetchall()
    groups: dict[tuple[str, str], list] = {}
    for model, market, price, start, stop in rows:
        groups.setdefault((model, market), []).append((price, max(start, since), stop))
    out = []
    for (model, market), versions in sorted(groups.items()):
        times = sorted({s for _, s, _ in versions} | {e for _, _, e in versions if e is not None and e <= until} | {until})
        last = object()
        for i, t in enumerate(times):
            price = min((p for p, s, e in versions if s <= t and (e is None or e > t)), default=None)
            if i == 0 or price != last or t == until:
                out.append((model, market, t, price))
            last = price
    return out


@pytest.fixture
def history_db(catalog_db, tmp_path):
    """The replayed catalog plus a random closed history for some offers: moving prices, gaps when
    an offer is not listed, versions that straddle the window's start, and equal prices."""
    path = tmp_path / "gpucat.duckdb"
    shutil.copy(catalog_db, path)
    rng = random.Random(26)
    with duckdb.connect(str(path)) as con:
        offers = con.execute(
            "SELECT provider, offer_id FROM offer_versions WHERE valid_to IS NULL AND gpu_model IN ('H100-SXM', 'A100-SXM4-80GB')"
            " ORDER BY provider, offer_id LIMIT 40"
        ).fetchall()
        for provider, offer_id in offers:
            t = NOW - timedelta(days=rng.uniform(20, 40))
            for n in range(rng.randint(1, 25)):
                length = timedelta(hours=rng.choice([1, 2, 6, 24, 24 * 3]))
                price = rng.choice([1.5, 2.0, 2.0, 2.5, 3.0, 4.0, rng.uniform(1, 5)])
                con.execute(
                    "INSERT INTO offer_versions SELECT * REPLACE ($price AS usd_per_gpu_hour, $start AS valid_from, $stop AS valid_to,"
                    " 'test:' || $n AS content_hash) FROM offer_versions WHERE provider = $provider AND offer_id = $offer_id"
                    " AND valid_to IS NULL",
                    {"price": price, "start": t, "stop": t + length, "n": n, "provider": provider, "offer_id": offer_id},
                )  # fmt: skip
                t += length + (timedelta(hours=rng.choice([3, 30])) if rng.random() < 0.2 else timedelta())
    return path


@pytest.mark.parametrize("days", [1, 7, 30, 90])
def test_history_matches_a_sweep_over_every_version(history_db, days):
    models = ["A100-SXM4-80GB", "H100-SXM", "RTX-4090"]
    since, until = NOW - timedelta(days=days), NOW
    with duckdb.connect(str(history_db), read_only=True) as con:
        got = con.execute(query_sql("report_history"), {"models": models, "since": since, "until": until}).fetchall()
        expected = brute_force(con, models, since, until)
    assert len(got) > 3 * len(models)
    assert [(m, k, t, p) for m, k, t, p in got] == expected


def test_report_draws_the_window_it_was_given(history_db):
    with duckdb.connect(str(history_db), read_only=True) as con:
        week = report.collect(con, now=NOW, window_days=7)
        season = report.collect(con, now=NOW, window_days=90)
    assert min(r["at"] for r in week.history) == NOW - timedelta(days=7)
    assert min(r["at"] for r in season.history) == NOW - timedelta(days=90)
    assert {r["gpu_model"] for r in season.history} <= set(report.history_models(season.spread))
    assert len(season.history) > len(week.history)


@pytest.mark.parametrize("days", [0, -3])
def test_a_window_must_reach_back(catalog_db, days):
    from gpucat.schemas.errors import UserInputError

    with duckdb.connect(str(catalog_db), read_only=True) as con, pytest.raises(UserInputError, match="--window-days must be positive"):
        report.collect(con, now=NOW, window_days=days)
