"""Settings once, at the edge: one module reads gpucat's variables, one table documents them, and
the default database does not depend on the current directory."""

from __future__ import annotations

import ast
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.cli._common import DEMO_CAPTURE
from gpucat.schemas.errors import UserInputError
from gpucat.schemas.settings import VARIABLES, Settings, settings_table, user_cache_dir, user_data_dir
from tests.conftest import FIXTURES, ROOT
from tests.test_layers import project_modules

SETTINGS_MODULE = ROOT / "schemas" / "settings.py"
# Reads of the whole environment that are not gpucat's variables, each with why.
WHOLE_ENVIRON = {
    ("gpucat/pipeline.py", "fetch_source"): "provider API keys (RUNPOD_API_KEY, ...): the providers' variables",
    ("gpucat/pipeline.py", "known_secrets"): "provider API keys' values, scrubbed from anything stored",
    ("scrapers/http.py", "__init__"): "provider API keys: the Fetcher reads its source's key",
}  # fmt: skip


def test_every_variable_is_read_into_one_settings_object():
    env = {
        "GPUCAT_DB": "/srv/cat.duckdb", "GPUCAT_WAREHOUSE": "ducklake:postgres:dbname=g", "GPUCAT_LAKE_DATA": "s3://b/g/",
        "GPUCAT_NOW": "2027-11-30T06:00:00", "GPUCAT_SCHEDULES": "/etc/gpucat/schedules.toml", "GPUCAT_CACHE_DIR": "/c",
        "GPUCAT_OFFLINE": "yes", "GPUCAT_AWS_REGIONS": "us-east-1, eu-west-1,", "GPUCAT_PARSE_PROCESSES": "3",
        "GPUCAT_HTTP_MAX_ATTEMPTS": "2", "GPUCAT_HTTP_BACKOFF_BASE_S": "0.5", "GPUCAT_HTTP_BACKOFF_MAX_S": "4",
        "GPUCAT_HTTP_MAX_TOTAL_S": "60", "GPUCAT_DASK_ADDRESS": "tcp://10.0.0.5:8786", "GPUCAT_DASK_WORKERS": "4",
        "XDG_DATA_HOME": "/xdg/data", "XDG_CACHE_HOME": "/xdg/cache", "HOME": "/home/u",
    }  # fmt: skip
    assert Settings.from_env(env) == Settings(
        db="/srv/cat.duckdb", warehouse="ducklake:postgres:dbname=g", lake_data="s3://b/g/",
        now=datetime(2027, 11, 30, 6, tzinfo=UTC), schedules=Path("/etc/gpucat/schedules.toml"), cache_dir=Path("/c"),
        offline=True, aws_regions=("us-east-1", "eu-west-1"), parse_processes=3, http_max_attempts=2,
        http_backoff_base_s=0.5, http_backoff_max_s=4.0, http_max_total_s=60.0, dask_address="tcp://10.0.0.5:8786",
        dask_workers=4, data_dir=Path("/xdg/data/gpucat"), user_cache_dir=Path("/xdg/cache/gpucat"),
    )  # fmt: skip


def test_unset_variables_mean_the_documented_defaults():
    settings = Settings.from_env({"HOME": "/home/u"})
    assert settings == Settings(data_dir=Path("/home/u/.local/share/gpucat"), user_cache_dir=Path("/home/u/.cache/gpucat"))
    assert (settings.db_target(), settings.cache_root(), settings.retry_overrides()) == (
        Path("/home/u/.local/share/gpucat/gpucat.duckdb"), Path("/home/u/.cache/gpucat"), {},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("explicit", "env", "target"),
    [
        (None, {}, Path("/d/gpucat/gpucat.duckdb")),
        (None, {"GPUCAT_DB": "x.duckdb"}, "x.duckdb"),
        (None, {"GPUCAT_DB": "x.duckdb", "GPUCAT_WAREHOUSE": "ducklake:meta.ducklake"}, "ducklake:meta.ducklake"),
        ("given.duckdb", {"GPUCAT_DB": "x.duckdb", "GPUCAT_WAREHOUSE": "ducklake:m"}, "given.duckdb"),
    ],
)
def test_the_database_is_the_option_then_the_variables_then_the_data_directory(explicit, env, target):
    assert Settings.from_env({"XDG_DATA_HOME": "/d", **env}).db_target(explicit) == target


@pytest.mark.parametrize(
    ("platform", "env", "folder"),
    [
        ("linux", {"HOME": "/home/u"}, "/home/u/.local/share/gpucat"),
        ("linux", {"HOME": "/home/u", "XDG_DATA_HOME": "/data"}, "/data/gpucat"),
        ("linux", {"HOME": "/home/u", "XDG_DATA_HOME": "relative/ignored"}, "/home/u/.local/share/gpucat"),
        ("darwin", {"HOME": "/Users/u", "XDG_DATA_HOME": "/data"}, "/Users/u/Library/Application Support/gpucat"),
        ("win32", {"HOME": "/h", "LOCALAPPDATA": "/appdata/local"}, "/appdata/local/gpucat"),
    ],
)
def test_the_user_data_directory_follows_the_platform(platform, env, folder):
    assert user_data_dir(env, platform) == Path(folder)


def test_the_cache_stays_where_it_was():
    assert user_cache_dir({"HOME": "/home/u"}) == Path("/home/u/.cache/gpucat")
    assert user_cache_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/gpucat")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("GPUCAT_NOW", "soon", "GPUCAT_NOW='soon' is not an ISO 8601 time, e.g. 2027-11-30T06:00:00Z"),
        ("GPUCAT_HTTP_MAX_ATTEMPTS", "0", "GPUCAT_HTTP_MAX_ATTEMPTS='0' must be at least 1"),
        ("GPUCAT_HTTP_MAX_ATTEMPTS", "many", "GPUCAT_HTTP_MAX_ATTEMPTS='many' is not valid (invalid literal for int() with base 10: 'many')"),
        ("GPUCAT_HTTP_MAX_TOTAL_S", "-1", "GPUCAT_HTTP_MAX_TOTAL_S='-1' must be a positive number"),
        ("GPUCAT_HTTP_BACKOFF_BASE_S", "nan", "GPUCAT_HTTP_BACKOFF_BASE_S='nan' must be a positive number"),
        ("GPUCAT_DASK_WORKERS", "2.5", "GPUCAT_DASK_WORKERS='2.5' is not valid (invalid literal for int() with base 10: '2.5')"),
        ("GPUCAT_OFFLINE", "maybe", "GPUCAT_OFFLINE='maybe' must be 1/true/yes or 0/false/no"),
    ],
)
def test_a_malformed_value_is_one_error_naming_the_variable(name, value, message):
    with pytest.raises(UserInputError) as caught:
        Settings.from_env({name: value})
    assert str(caught.value) == message


def test_a_malformed_value_is_one_error_line_from_a_command(tmp_path):
    result = CliRunner().invoke(app, ["status", "--db", str(tmp_path / "x.duckdb")], env={"GPUCAT_NOW": "soon"})
    assert (result.exit_code, result.output) == (2, "error: GPUCAT_NOW='soon' is not an ISO 8601 time, e.g. 2027-11-30T06:00:00Z\n")


def test_hugging_face_offline_switches_gpucat_offline():
    assert Settings.from_env({"HF_HUB_OFFLINE": "1"}).offline
    assert not Settings.from_env({"HF_HUB_OFFLINE": "nonsense"}).offline


def test_the_readme_documents_every_variable_in_one_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert settings_table() in readme
    assert [v.name for v in VARIABLES] == sorted({v.name for v in VARIABLES}, key=[v.name for v in VARIABLES].index)  # no repeats


def _env_uses(tree: ast.AST) -> list[tuple[ast.AST, str | None]]:
    """Each use of the process environment: (node, the function it sits in)."""
    found: list[tuple[ast.AST, str | None]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv") and isinstance(node.value, ast.Name) and node.value.id == "os":
            found.append((node, function))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _literal_key(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str | None:
    """The variable named by `os.environ["X"]`, `os.environ.get("X")` (setdefault, pop), `os.getenv("X")`."""
    parent = parents.get(node)
    if isinstance(parent, ast.Subscript) and isinstance(parent.slice, ast.Constant):
        return parent.slice.value
    call = parents.get(parent) if isinstance(parent, ast.Attribute) else parent
    if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        return call.args[0].value
    return None


def test_only_the_settings_module_reads_gpucat_variables():
    """No module but schemas/settings.py touches the environment for a GPUCAT_ variable, and the
    whole environment is used only where listed (other parties' variables), with the reason."""
    problems, whole = [], set()
    for path in project_modules().values():
        if path == SETTINGS_MODULE:
            continue
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = _parents(tree)
        for node in ast.walk(tree):  # a GPUCAT_ key read from any mapping (an `env` handed down) is a read too
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "setdefault", "pop"):
                if node.args and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("GPUCAT_"):
                    problems.append(f"{rel}:{node.lineno} reads {node.args[0].value}")
        for node, function in _env_uses(tree):
            key = _literal_key(node, parents)
            if key is None:
                whole.add((rel, function))
                if (rel, function) not in WHOLE_ENVIRON:
                    problems.append(f"{rel}:{node.lineno} uses the whole environment in {function}")
            elif key.startswith("GPUCAT_"):
                problems.append(f"{rel}:{node.lineno} touches {key}")
    assert problems == []
    assert whole == set(WHOLE_ENVIRON)  # the list holds no stale entry


# Where `Settings.from_env()` may be called: the edges, each reading the settings once as it starts
# and passing them (or the field a step needs) down. (module, function; None: at import)
EDGES = {
    ("gpucat/cli/_common.py", "cli_settings"): "the command line, as a command starts",
    ("gpucat/api/__init__.py", "_open"): "the Python API, as a read opens the warehouse",
    ("gpucat/api/__init__.py", "clock"): "the Python API's clock",
    ("gpucat/api/__init__.py", "_training"): "the Python API's training request (the Hub cache, offline mode)",
    ("flows/refresh.py", "refresh"): "a flow run, as it starts",
    ("flows/refresh_dask.py", None): "prefect.yaml's Dask entrypoint, as a worker imports it",
    ("flows/serve.py", "main"): "`python -m flows.serve`",
}


def settings_reads(tree: ast.AST) -> list[tuple[int, str | None]]:
    """Each `Settings.from_env(...)` call: (line, the function it sits in)."""
    found: list[tuple[int, str | None]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "from_env":
            found.append((node.lineno, function))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


def test_settings_are_read_only_at_the_edges():
    """Everything below the edges is handed its settings: a `Settings.from_env()` anywhere else is a
    second read of the environment, which a caller's settings (a test's, the API's) cannot reach."""
    problems, seen = [], set()
    for path in project_modules().values():
        if path == SETTINGS_MODULE:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for line, function in settings_reads(ast.parse(path.read_text(encoding="utf-8"))):
            seen.add((rel, function))
            if (rel, function) not in EDGES:
                problems.append(f"{rel}:{line} reads the settings in {function or 'the module body'}")
    assert problems == []
    assert seen == set(EDGES)  # the list holds no stale entry


def test_the_edge_check_finds_a_read_below_the_edges():
    planted = "from gpucat.schemas.settings import Settings\n\ndef db_path(explicit=None):\n    return Settings.from_env().db_target(explicit)\n"
    assert settings_reads(ast.parse(planted)) == [(4, "db_path")]


def test_no_command_writes_the_environment():
    """The command line (gpucat/cli) sets no gpucat variable; what it sets is Prefect's own
    logging defaults, before Prefect reads them, and only where unset."""
    for path in sorted((ROOT / "gpucat" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = _parents(tree)
        for node, _ in _env_uses(tree):
            parent = parents.get(node)
            key = _literal_key(node, parents)
            writes = isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store) or (
                isinstance(parent, ast.Attribute) and parent.attr in ("update", "setdefault", "pop", "__setitem__", "clear"))
            if writes:
                assert key is not None and key.startswith("PREFECT_") and parent.attr == "setdefault", f"{path.name}:{node.lineno}"


def test_every_gpucat_variable_the_code_names_is_a_setting():
    """A GPUCAT_ name written anywhere in the code is one the settings table documents."""
    known = {v.name for v in VARIABLES}
    named = set()
    for path in project_modules().values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"GPUCAT_[A-Z0-9_]+", node.value):
                named.add(node.value)
    assert named <= known, named - known


def test_the_demo_is_the_repositorys_fixtures():
    assert DEMO_CAPTURE == FIXTURES.resolve()
    assert (ROOT / "gpucat" / "fixtures").is_symlink()


def test_demo_and_replay_exclude_each_other(tmp_path):
    result = CliRunner().invoke(app, ["refresh", "--demo", "--replay", str(FIXTURES), "--db", str(tmp_path / "g.duckdb")])
    assert (result.exit_code, result.output) == (2, "error: --demo replays the bundled capture: leave out --replay, or --demo\n")
    assert not (tmp_path / "g.duckdb").exists()


def test_read_commands_find_the_database_in_the_data_directory_from_any_directory(catalog_db, tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.chdir(tmp_path)
    missing = CliRunner().invoke(app, ["status"])
    assert (missing.exit_code, missing.output) == (
        1, f"error: no database at {data}/gpucat/gpucat.duckdb; run `gpucat refresh` first or pass --db\n",
    )  # fmt: skip
    (data / "gpucat").mkdir(parents=True)
    shutil.copy(catalog_db, data / "gpucat" / "gpucat.duckdb")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status = CliRunner().invoke(app, ["status"], env={"COLUMNS": "250"})
    assert status.exit_code == 0, status.output
    assert status.stdout.splitlines()[0] == f"database: {data}/gpucat/gpucat.duckdb"
    offers = CliRunner().invoke(app, ["offers", "--gpu", "H100", "--on-demand", "--json"])
    assert offers.exit_code == 0 and '"gpu_model": "H100' in offers.stdout
    assert list(elsewhere.iterdir()) == []
