"""The house's order, checked from the code's own imports (docs/architecture.md explains it).

Every project module is parsed (not imported), and every `import` in it, at module level or
inside a function, is an arrow. Arrows may only point to the same floor or a lower one, and
neither the folders nor the files (a package's `__init__` is a file too) may import each other
in a loop.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import ROOT

# Bottom to top. A module belongs to the longest matching prefix.
FLOORS = [
    "gpucat.schemas",
    "gpucat.scrapers",
    "gpucat.warehouse",
    "gpucat",
    "gpucat.flows",
    "gpucat.cli",
    "gpucat.__main__",
]
# `python -m gpucat` runs gpucat/__main__.py: the roof, which nothing imports; it sits in the
# package's folder only because Python looks for it there, so the folder graph leaves it out.
ROOF = "gpucat.__main__"
# The repository's folders; the layer folders are imported as `gpucat.<folder>` (gpucat/ links them in).
PACKAGES = ("schemas", "scrapers", "warehouse", "gpucat", "flows")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] != "gpucat":
        parts.insert(0, "gpucat")
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Every module once, at its real path (the links in gpucat/ are not walked)."""
    found = {}
    for package in PACKAGES:
        for p in sorted((ROOT / package).rglob("*.py")):
            if not any((ROOT / package / q).is_symlink() for q in p.relative_to(ROOT / package).parents):
                found[module_name(p)] = p
    return found


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """Project modules `path` imports, resolved to the most specific known module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import mod` reads the file pkg/mod.py; `from pkg import name` reads pkg's
            # __init__, where the name is bound: that is an arrow to the package itself.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def floor(module: str) -> str:
    return max((f for f in FLOORS if module == f or module.startswith(f + ".")), key=len)


def folder(module: str, modules: dict[str, Path]) -> str:
    return modules[module].parent.relative_to(ROOT).as_posix()


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, Path], dict[str, set[str]]]:
    modules = project_modules()
    known = set(modules)
    return modules, {name: imports_of(path, name, known) for name, path in modules.items()}


def test_every_arrow_points_to_the_same_floor_or_below(graph):
    _, edges = graph
    upward = sorted(
        f"{src} -> {dst}" for src, targets in edges.items() for dst in targets if FLOORS.index(floor(dst)) > FLOORS.index(floor(src))
    )
    assert upward == []


def test_the_ground_floor_imports_nothing_else_of_the_project(graph):
    _, edges = graph
    assert sorted(f"{s} -> {d}" for s, ts in edges.items() if floor(s) == "gpucat.schemas" for d in ts if floor(d) != "gpucat.schemas") == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_file_imports_itself_through_a_loop(graph):
    """A package's `__init__` counts as a file: a module that takes a name from its own package's
    `__init__` while that `__init__` imports the module is a loop (Python runs one half-done)."""
    _, edges = graph
    assert _cycles(edges) == []


def test_no_folder_imports_itself_through_a_loop(graph):
    modules, edges = graph
    folders: dict[str, set[str]] = defaultdict(set)
    for src, targets in edges.items():
        if src == ROOF:
            continue
        for dst in targets:
            a, b = folder(src, modules), folder(dst, modules)
            if a != b:
                folders[a].add(b)
    assert _cycles(folders) == []


def test_the_checker_sees_a_planted_upward_arrow(tmp_path):
    """The rules above would pass on a parser that saw nothing; show that they see an arrow."""
    planted = tmp_path / "schemas" / "x.py"
    planted.parent.mkdir()
    planted.write_text("def f():\n    from gpucat.cli import app\n")
    found = imports_of(planted, "gpucat.schemas.x", {"gpucat.schemas.x", "gpucat", "gpucat.cli"})
    assert found == {"gpucat.cli"}
    assert FLOORS.index(floor("gpucat.cli")) > FLOORS.index(floor("gpucat.schemas.x"))
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]


def test_the_checker_sees_a_planted_loop_through_a_package_init(tmp_path):
    """The shape gpucat/cli once had: the package's __init__ builds `app` and imports its command
    modules, which take `app` back from the package. Taking a sibling module instead is no loop."""
    package = tmp_path / "gpucat" / "cli"
    package.mkdir(parents=True)
    init = package / "__init__.py"
    init.write_text("app = object()\nfrom gpucat.cli import run  # noqa: E402\n")
    run = package / "run.py"
    run.write_text("from gpucat.cli import app\n")
    known = {"gpucat.cli", "gpucat.cli.run", "gpucat.cli._app"}
    edges = {"gpucat.cli": imports_of(init, "gpucat.cli", known), "gpucat.cli.run": imports_of(run, "gpucat.cli.run", known)}
    assert edges == {"gpucat.cli": {"gpucat.cli.run"}, "gpucat.cli.run": {"gpucat.cli"}}
    assert _cycles(edges) == [["gpucat.cli", "gpucat.cli.run"]]

    run.write_text("from gpucat.cli._app import app\nfrom gpucat.cli import _app\n")
    edges["gpucat.cli.run"] = imports_of(run, "gpucat.cli.run", known)
    assert edges["gpucat.cli.run"] == {"gpucat.cli._app"}
    assert _cycles(edges) == []
