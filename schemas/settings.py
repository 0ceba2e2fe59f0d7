"""gpucat's settings: every `GPUCAT_*` environment variable, read here and nowhere else.

The edges (the command line, the Python API, the Prefect flow and the runners) call
`Settings.from_env()` once when they start and pass the object, or the field a step needs, down.
No other module reads gpucat's variables from the environment and no command writes them.
`VARIABLES` is the one list: it parses each variable and documents it (the README's table is
`settings_table()`, checked by tests/package/test_settings.py).

The default database lives in the user's data directory, so every command finds the file that
`refresh` wrote whatever the current directory: `$XDG_DATA_HOME/gpucat/gpucat.duckdb` on Linux
(`~/.local/share/gpucat/gpucat.duckdb` when XDG_DATA_HOME is unset), `~/Library/Application
Support/gpucat/gpucat.duckdb` on macOS and `%LOCALAPPDATA%\\gpucat\\gpucat.duckdb` on Windows.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpucat.schemas.errors import UserInputError

DB_FILE = "gpucat.duckdb"
# A provider's API key is named by its source (`Source.api_key_env`), e.g. RUNPOD_API_KEY: these
# are the provider's variables, not gpucat's, and are kept as credentials for the fetchers.
CREDENTIAL_SUFFIX = "_API_KEY"


def user_data_dir(env: Mapping[str, str] = os.environ, platform: str = sys.platform) -> Path:
    """gpucat's folder in the user's data directory (the platform's convention, as described above)."""
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Application Support" / "gpucat"
    if platform.startswith("win"):
        return Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local") / "gpucat"
    xdg = env.get("XDG_DATA_HOME", "")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share") / "gpucat"  # XDG: relative values are ignored


def user_cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    """gpucat's folder in the XDG cache directory ($XDG_CACHE_HOME, else ~/.cache): where it has always been."""
    xdg = env.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if xdg else Path(env.get("HOME") or Path.home()) / ".cache") / "gpucat"


def _text(value: str) -> str:
    return value


def _path(value: str) -> Path:
    return Path(value).expanduser()


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError("must be at least 1")
    return number


def _positive_float(value: str) -> float:
    number = float(value)
    if not number > 0 or number == float("inf"):
        raise ValueError("must be a positive number")
    return number


def _flag(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("must be 1/true/yes or 0/false/no")


def _time(value: str) -> datetime:
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("is not an ISO 8601 time, e.g. 2027-11-30T06:00:00Z") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _regions(value: str) -> tuple[str, ...]:
    return ("*",) if value.strip() == "*" else tuple(r.strip() for r in value.split(",") if r.strip())


@dataclass(frozen=True)
class Variable:
    name: str
    field: str
    parse: Callable[[str], Any]
    default: str
    meaning: str


VARIABLES = (
    Variable("GPUCAT_DB", "db", _text, "gpucat.duckdb in the user data directory ([Install](#install))", "The DuckDB file every command reads and `refresh` writes (`--db` wins)."),
    Variable("GPUCAT_WAREHOUSE", "warehouse", _text, "unset", "A DuckDB file or a `ducklake:` URL (team mode); wins over GPUCAT_DB (`--warehouse` wins over both)."),
    Variable("GPUCAT_LAKE_DATA", "lake_data", _text, "the lake's own default", "Where a new DuckLake writes its Parquet files: a folder or an object-store URL."),
    Variable("GPUCAT_NOW", "now", _time, "the database's now()", "The clock read commands age data against (ISO 8601, UTC unless it says), e.g. to see a catalog a year on."),
    Variable("GPUCAT_SCHEDULES", "schedules", _path, "the schedules.toml shipped with gpucat", "The schedules file: refresh groups, crons and freshness budgets (`--config` wins)."),
    Variable("GPUCAT_CACHE_DIR", "cache_dir", _path, "$XDG_CACHE_HOME/gpucat (~/.cache/gpucat)", "Where fetched Hugging Face config.json files are kept."),
    Variable("GPUCAT_OFFLINE", "offline", _flag, "0", "1: never fetch a model's config from the Hugging Face Hub (HF_HUB_OFFLINE=1 does the same)."),
    Variable("GPUCAT_AWS_REGIONS", "aws_regions", _regions, "every region", "AWS price-list regions to fetch, comma-separated; `*` fetches the one all-regions file."),
    Variable("GPUCAT_PARSE_PROCESSES", "parse_processes", _positive_int, "one per CPU that pays, at most 8", "Processes that scan a large price-list file."),
    Variable("GPUCAT_HTTP_MAX_ATTEMPTS", "http_max_attempts", _positive_int, "5", "Attempts per request (429, 5xx and connection errors are retried)."),
    Variable("GPUCAT_HTTP_BACKOFF_BASE_S", "http_backoff_base_s", _positive_float, "1.0", "First retry's maximum wait, seconds (full jitter, doubling)."),
    Variable("GPUCAT_HTTP_BACKOFF_MAX_S", "http_backoff_max_s", _positive_float, "30.0", "Longest wait between two attempts, seconds."),
    Variable("GPUCAT_HTTP_MAX_TOTAL_S", "http_max_total_s", _positive_float, "300.0", "Longest time one request may spend in retries, seconds."),
    Variable("GPUCAT_DASK_ADDRESS", "dask_address", _text, "unset", "A Dask scheduler (tcp://host:8786) for served runs and the Dask flow."),
    Variable("GPUCAT_DASK_WORKERS", "dask_workers", _positive_int, "2", "Workers of the temporary local Dask cluster."),
)  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """gpucat's settings, as the environment gave them; None means "the documented default"."""

    db: str | None = None
    warehouse: str | None = None
    lake_data: str | None = None
    now: datetime | None = None
    schedules: Path | None = None
    cache_dir: Path | None = None
    offline: bool = False
    aws_regions: tuple[str, ...] | None = None
    parse_processes: int | None = None
    http_max_attempts: int | None = None
    http_backoff_base_s: float | None = None
    http_backoff_max_s: float | None = None
    http_max_total_s: float | None = None
    dask_address: str | None = None
    dask_workers: int | None = None
    # Provider API keys (RUNPOD_API_KEY, ...) by variable name: handed to the fetchers, never logged.
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)
    data_dir: Path = field(default_factory=lambda: user_data_dir({}))
    user_cache_dir: Path = field(default_factory=lambda: user_cache_dir({}))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment (default: this process's) gives; a malformed value is one
        `UserInputError` naming the variable."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for var in VARIABLES:
            raw = env.get(var.name, "").strip()
            if not raw:
                continue
            try:
                values[var.field] = var.parse(raw)
            except ValueError as exc:
                reason = str(exc) if str(exc).startswith(("must", "is not")) else f"is not valid ({exc})"
                raise UserInputError(f"{var.name}={raw!r} {reason}") from None
        # Other tools' variables that say the same thing as one of ours.
        if not values.get("offline") and _flag_or_false(env.get("HF_HUB_OFFLINE", "")):
            values["offline"] = True
        credentials = {k: v for k, v in env.items() if k.endswith(CREDENTIAL_SUFFIX) and v}
        return cls(**values, credentials=credentials, data_dir=user_data_dir(env), user_cache_dir=user_cache_dir(env))

    @property
    def default_db(self) -> Path:
        """The database a command opens without --db, $GPUCAT_WAREHOUSE or $GPUCAT_DB."""
        return self.data_dir / DB_FILE

    def db_target(self, explicit: str | Path | None = None) -> str | Path:
        """`--db`/`--warehouse` wins, then $GPUCAT_WAREHOUSE, then $GPUCAT_DB, then `default_db`
        (a value as typed: the warehouse decides whether it is a file or a lake URL)."""
        return explicit or self.warehouse or self.db or self.default_db

    def cache_root(self) -> Path:
        """gpucat's cache folder: $GPUCAT_CACHE_DIR, else the user cache directory's gpucat/."""
        return self.cache_dir or self.user_cache_dir

    def retry_overrides(self) -> dict[str, float]:
        """The HTTP retry settings the environment sets, by `RetryPolicy` field name."""
        names = ("max_attempts", "backoff_base_s", "backoff_max_s", "max_total_s")
        return {n: getattr(self, f"http_{n}") for n in names if getattr(self, f"http_{n}") is not None}


def _flag_or_false(value: str) -> bool:
    try:
        return _flag(value)
    except ValueError:
        return False


def settings_table() -> str:
    """The README's settings table, from `VARIABLES`."""
    lines = ["| variable | default | what it sets |", "|---|---|---|"]
    lines += [f"| `{v.name}` | {v.default} | {v.meaning} |" for v in VARIABLES]
    return "\n".join(lines) + "\n"


assert {v.field for v in VARIABLES} == {f.name for f in fields(Settings)} - {"credentials", "data_dir", "user_cache_dir"}
