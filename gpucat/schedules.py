"""When each source refreshes and how old its data may get: the groups of `schedules.toml`.

One file declares the schedule of every source group (`gpucat serve` turns each group into a
Prefect deployment) and, from the same schedule, each source's freshness budget: the age after
which its offers count as stale (`current_offers.is_stale`, `gpucat status`, `fit`).
Sources are grouped by rules in the file (names or the tables they fill), never in code.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from gpucat.schemas.errors import UserInputError
from gpucat.scrapers import all_sources
from gpucat.scrapers.base import Source
from gpucat.warehouse.db import query_sql

SCHEDULES_TOML = Path(__file__).with_name("schedules.toml")
# A budget is this many times the longest gap between two scheduled runs, unless the file says.
BUDGET_FACTOR = 2
# Cron fields: minute, hour, day of month, month, day of week (0 or 7 = Sunday).
_FIELDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_SCAN_DAYS = 800  # long enough to see a yearly schedule's gap twice
# A group is due this long before its interval has passed: ticks land a little late or early.
DUE_SLACK = timedelta(minutes=10)


@dataclass(frozen=True)
class Group:
    name: str
    description: str
    cron: str
    sources: tuple[str, ...]
    interval_hours: float
    stale_after_hours: float


def config_path(explicit: str | Path | None = None) -> Path:
    """The schedules file given (`--config`, else the edge's `Settings.schedules`: $GPUCAT_SCHEDULES),
    else the file shipped with gpucat."""
    return Path(explicit or SCHEDULES_TOML)


def load_groups(path: str | Path | None = None, sources: Mapping[str, Source] | None = None) -> list[Group]:
    """Every group with at least one source, each registered source in exactly one group."""
    target = config_path(path)
    try:
        config = tomllib.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserInputError(f"cannot read schedules from {target}: {exc}") from None
    sources = all_sources() if sources is None else sources
    declared = config.get("groups")
    if not isinstance(declared, dict) or not declared:
        raise UserInputError(f"{target}: no [groups.NAME] tables")
    unclaimed = dict(sources)
    claims: dict[str, list[str]] = {}
    for name, spec in declared.items():
        named = spec.get("sources", [])
        unknown = sorted(set(named) - set(sources))
        if unknown:
            raise UserInputError(f"{target}: group {name!r} names unknown sources {', '.join(unknown)}")
        tables = set(spec.get("tables", []))
        claims[name] = [s for s in list(unclaimed) if s in named or tables & set(sources[s].tables)]
        for s in claims[name]:
            del unclaimed[s]
    rest = [name for name, spec in declared.items() if spec.get("rest")]
    if len(rest) > 1:
        raise UserInputError(f"{target}: only one group may say rest = true ({', '.join(rest)} do)")
    if rest:
        claims[rest[0]].extend(unclaimed)
    elif unclaimed:
        raise UserInputError(f"{target}: no group schedules {', '.join(unclaimed)}; name them or mark a group rest = true")
    groups = []
    for name, spec in declared.items():
        if not claims[name]:
            continue
        if "cron" not in spec:
            raise UserInputError(f"{target}: group {name!r} has no cron")
        interval = cron_interval_hours(spec["cron"])
        groups.append(
            Group(
                name=name,
                description=spec.get("description", ""),
                cron=spec["cron"],
                sources=tuple(claims[name]),
                interval_hours=interval,
                stale_after_hours=float(spec.get("stale_after_hours", BUDGET_FACTOR * interval)),
            )
        )
    return groups


def schedules_frame(config: str | Path | None = None) -> pl.DataFrame:
    """`source_schedules` rows, which every refresh writes: each source's group, cron and budget."""
    rows = [
        {"source": s, "schedule_group": g.name, "cron": g.cron, "stale_after_hours": g.stale_after_hours}
        for g in load_groups(config)
        for s in g.sources
    ]
    return pl.DataFrame(rows, schema={"source": pl.String, "schedule_group": pl.String, "cron": pl.String, "stale_after_hours": pl.Float64})


def freshness_budgets(groups: list[Group]) -> dict[str, float]:
    """Source name -> hours after which its data is stale."""
    return {source: g.stale_after_hours for g in groups for source in g.sources}


def cron_interval_hours(cron: str) -> float:
    """The longest gap between two runs of a five-field cron schedule, in hours."""
    fields = cron.split()
    if len(fields) != 5:
        raise UserInputError(f"cron {cron!r} needs five fields: minute hour day-of-month month day-of-week")
    minutes, hours, days, months, weekdays = (_values(f, lo, hi, cron) for f, (lo, hi) in zip(fields, _FIELDS, strict=True))
    weekdays = {d % 7 for d in weekdays}
    restricted_day, restricted_weekday = fields[2] != "*", fields[4] != "*"
    times: list[int] = []  # minutes since the scan's start
    start = date(2024, 1, 1)
    for offset in range(_SCAN_DAYS):
        day = start + timedelta(days=offset)
        in_month, on_day, on_weekday = day.month in months, day.day in days, day.isoweekday() % 7 in weekdays
        # Cron's rule: with both day fields restricted, either may match.
        matches = (on_day or on_weekday) if restricted_day and restricted_weekday else (on_day and on_weekday)
        if in_month and matches:
            times.extend((offset * 24 + h) * 60 + m for h in sorted(hours) for m in sorted(minutes))
    if len(times) < 2:
        raise UserInputError(f"cron {cron!r} runs less than twice in {_SCAN_DAYS} days")
    return max(b - a for a, b in zip(times, times[1:])) / 60


def _values(field: str, lo: int, hi: int, cron: str) -> set[int]:
    out: set[int] = set()
    for part in field.split(","):
        base, _, step = part.partition("/")
        try:
            first, last = (lo, hi) if base == "*" else (int(base.split("-")[0]), int(base.split("-")[-1]))
            if step and "-" not in base and base != "*":
                last = hi
            stride = int(step) if step else 1
        except ValueError:
            raise UserInputError(f"cron {cron!r}: cannot read {field!r} (numbers, *, ranges and /steps only)") from None
        if not lo <= first <= last <= hi or stride < 1:
            raise UserInputError(f"cron {cron!r}: {field!r} is outside {lo}-{hi}")
        out.update(range(first, last + 1, stride))
    return out


def select_groups(groups: list[Group], names: list[str] | None) -> list[Group]:
    if not names:
        return groups
    known = {g.name: g for g in groups}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserInputError(f"unknown schedule group {', '.join(unknown)}; groups: {', '.join(known)}")
    return [known[n] for n in names]


def due_groups(con: duckdb.DuckDBPyConnection, groups: list[Group], now: datetime) -> list[Group]:
    """The groups none of whose sources started a refresh within the group's interval (less
    DUE_SLACK): a served run takes them in, so a group whose tick was cancelled while another
    group's run held the database catches up on the next run instead of waiting a whole cycle."""
    started = dict(con.execute(query_sql("last_attempts")).fetchall())
    due = []
    for group in groups:
        latest = max((started[s] for s in group.sources if s in started), default=None)
        if latest is None or now - latest >= timedelta(hours=group.interval_hours) - DUE_SLACK:
            due.append(group)
    return due
