"""The schedules file: groups, rules, cron intervals, freshness budgets, and the deployments made of them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpucat.flows.refresh import database_label
from gpucat.flows.serve import deployment, deployment_parameters
from gpucat.schedules import cron_interval_hours, due_groups, freshness_budgets, load_groups, select_groups
from gpucat.schemas.errors import UserInputError
from gpucat.scrapers import all_sources
from tests.conftest import ROOT

# A source others need first (exchange rates), from the registry.
RATES = next(s.name for s in all_sources().values() if s.loads_first)


def test_shipped_schedules_place_every_source_once_with_budgets_twice_the_interval():
    groups = load_groups()
    placed = [s for g in groups for s in g.sources]
    assert sorted(placed) == sorted(all_sources())
    by_name = {g.name: (g.cron, g.interval_hours, g.stale_after_hours) for g in groups}
    assert by_name == {"live-stock": ("0 * * * *", 1.0, 2.0), "rates": ("0 6 * * *", 24.0, 48.0), "terms": ("30 6 * * *", 24.0, 48.0), "price-lists": ("0 */6 * * *", 6.0, 12.0)}
    # Rates are claimed by the table they fill, so a new rates source lands in the daily group.
    rate_sources = {s.name for s in all_sources().values() if "exchange_rates" in s.tables}
    assert set(next(g for g in groups if g.name == "rates").sources) == rate_sources
    assert freshness_budgets(groups) == {s: g.stale_after_hours for g in groups for s in g.sources}


@pytest.mark.parametrize(
    ("cron", "hours"),
    [
        ("0 * * * *", 1),
        ("*/15 * * * *", 0.25),
        ("0 */6 * * *", 6),
        ("0 6 * * *", 24),
        ("0 6,18 * * *", 12),
        ("0 6 * * 1-5", 72),  # Friday to Monday
        ("0 0 1 * *", 31 * 24),
        ("0 0 1,15 * 0", 7 * 24),  # both day fields: either matches
    ],
)
def test_cron_interval_is_the_longest_gap(cron: str, hours: float):
    assert cron_interval_hours(cron) == hours


@pytest.mark.parametrize(
    ("cron", "message"),
    [
        ("0 * * *", "needs five fields"),
        ("61 * * * *", "outside 0-59"),
        ("0 * * * MON", "cannot read 'MON'"),
        ("0 0 30 2 *", "runs less than twice"),
    ],
)
def test_bad_cron_is_one_clear_error(cron: str, message: str):
    with pytest.raises(UserInputError, match=message):
        cron_interval_hours(cron)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[groups.a]\ncron = "0 * * * *"\nsources = ["no-such-source"]\nrest = true\n', "names unknown sources no-such-source"),
        (f'[groups.a]\ncron = "0 * * * *"\nsources = ["{RATES}"]\n', "no group schedules"),
        ('[groups.a]\ncron = "0 * * * *"\nrest = true\n[groups.b]\ncron = "0 * * * *"\nrest = true\n', "only one group may say rest"),
        ("[groups.a]\nrest = true\n", "has no cron"),
        ("title = 1\n", "no \\[groups.NAME\\] tables"),
        ("[groups.a\n", "cannot read schedules"),
    ],
)
def test_bad_schedules_file_is_one_clear_error(tmp_path: Path, config: str, message: str):
    path = tmp_path / "schedules.toml"
    path.write_text(config)
    with pytest.raises(UserInputError, match=message):
        load_groups(path)


def test_explicit_budget_and_first_group_wins(tmp_path: Path):
    path = tmp_path / "schedules.toml"
    path.write_text(
        f'[groups.first]\ncron = "0 * * * *"\nsources = ["{RATES}"]\nstale_after_hours = 5\n'
        '[groups.second]\ncron = "0 0 * * *"\ntables = ["exchange_rates"]\nrest = true\n'
    )
    first, second = load_groups(path)
    assert (first.sources, first.stale_after_hours) == ((RATES,), 5.0)
    assert RATES not in second.sources and second.stale_after_hours == 48


def test_the_deployment_is_the_databases_with_a_schedule_per_group_and_one_run_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    groups = load_groups()
    made = deployment(groups, tmp_path / "x.duckdb", replay_dir=Path("captures"))
    label = database_label(tmp_path / "x.duckdb")
    assert made.name == label and label.startswith("x-") and f"db:{label}" in made.tags
    assert made.entrypoint == "gpucat.flows.refresh.refresh"
    assert [s.schedule.cron for s in made.schedules] == [g.cron for g in groups]
    for schedule, group in zip(made.schedules, groups, strict=True):
        assert schedule.parameters == {
            "schedule_group": group.name,
            "replay_dir": str(tmp_path / "captures"),
            "db_path": str(tmp_path / "x.duckdb"),
            "coalesce_groups": [g.name for g in groups],
        }
    limit = made.concurrency_limit if isinstance(made.concurrency_limit, int) else made.concurrency_limit.limit
    assert limit == 1 and made.concurrency_options.collision_strategy.value == "CANCEL_NEW"
    every = deployment(groups, tmp_path / "x.duckdb", every=30)
    [schedule] = every.schedules
    assert schedule.schedule.interval.total_seconds() == 30
    assert schedule.parameters["schedule_group"] == [g.name for g in groups] and "coalesce_groups" not in schedule.parameters


def test_two_databases_never_share_a_deployment_name_even_with_one_file_name(tmp_path: Path):
    labels = {database_label(tmp_path / "a" / "demo.duckdb"), database_label(tmp_path / "b" / "demo.duckdb"), database_label(tmp_path / "demo2.duckdb")}
    assert len(labels) == 3
    assert database_label(tmp_path / "a" / "demo.duckdb") == database_label(tmp_path / "a" / ".." / "a" / "demo.duckdb")


def test_a_group_is_due_when_none_of_its_sources_started_within_its_interval(tmp_path: Path):
    from datetime import UTC, datetime, timedelta

    from gpucat.warehouse import db

    groups = {g.name: g for g in load_groups()}
    now = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
    con = db.connect(tmp_path / "due.duckdb")
    started = {groups["live-stock"].sources[0]: now - timedelta(minutes=58), groups["price-lists"].sources[-1]: now - timedelta(hours=6)}
    for n, (source, at) in enumerate(started.items()):
        con.execute(
            "INSERT INTO scrape_runs (run_id, source, provider, started_at, finished_at, status) VALUES (?, ?, 'p', ?, ?, 'ok')", [str(n), source, at, at]
        )
    due = due_groups(con, [groups["live-stock"], groups["price-lists"], groups["rates"]], now)
    # live-stock ran 58 min ago (due within 10 min of its hour); price-lists 6 h ago; rates never.
    assert [g.name for g in due] == ["live-stock", "price-lists", "rates"]
    assert [g.name for g in due_groups(con, [groups["price-lists"]], now - timedelta(hours=1))] == []
    con.close()


def test_select_groups_by_name_and_unknown_names():
    groups = load_groups()
    assert [g.name for g in select_groups(groups, ["rates"])] == ["rates"]
    with pytest.raises(UserInputError, match="unknown schedule group nope; groups: live-stock, rates, terms, price-lists"):
        select_groups(groups, ["nope"])


def test_prefect_yaml_describes_the_same_deployments():
    declared = yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]
    expected = [
        {"name": g.name, "schedules": [{"cron": g.cron, "timezone": "UTC"}], "parameters": deployment_parameters(g)}
        for g in load_groups()
    ]
    got = [{"name": d["name"], "schedules": d["schedules"], "parameters": d["parameters"]} for d in declared]
    assert got == expected, "prefect.yaml drifted from gpucat/schedules.toml"
    assert {d["entrypoint"] for d in declared} == {"flows/refresh.py:refresh"}
    assert [d["concurrency_limit"] for d in declared] == [{"limit": 1, "collision_strategy": "CANCEL_NEW"}] * len(declared)


def test_serve_without_a_prefect_api_is_one_line(monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from gpucat.cli import app

    monkeypatch.setattr("gpucat.flows.serve.api_url", lambda: None)
    result = CliRunner().invoke(app, ["serve", "--every", "5"])
    assert result.exit_code == 2
    assert result.output.startswith("error: gpucat serve needs a Prefect API: run `prefect server start`")


def test_a_group_run_on_a_warehouse_without_rates_refreshes_the_rates_first():
    from gpucat import pipeline

    group = [s for s in all_sources().values() if not s.loads_first][:2]
    first = [s for s in all_sources().values() if s.loads_first]
    assert pipeline.with_prerequisites(group, {}) == first + group
    assert pipeline.with_prerequisites(group, {"EUR": object()}) == group
    assert pipeline.with_prerequisites(first, {}) == first  # never twice
