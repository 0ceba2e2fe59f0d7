"""Figures for the scraper frame (issue 22): how much of scrapers/ is provider knowledge, and what
the frame still leaves to the modules. `uv run python bench/scraper_frame.py [ROOT]` prints them
for the tree at ROOT (default: this checkout), e.g. an exported older commit to compare."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

FRAME = {"__init__", "base", "http", "capture", "conditional", "normalize", "_json", "_paging", "_html", "_linescan", "_gpus"}


def figures(root: Path) -> dict[str, object]:
    files = sorted((root / "scrapers").glob("*.py"))
    sources = [f for f in files if f.stem not in FRAME and not f.stem.startswith("_")]
    offer_calls = offer_lines = none_args = provenance = 0
    functions: list[tuple[int, str]] = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name == "Offer":
                    offer_calls += 1
                    offer_lines += node.end_lineno - node.lineno + 1  # type: ignore[operator]
                    none_args += sum(isinstance(k.value, ast.Constant) and k.value.value is None for k in node.keywords)
                if path in sources:
                    provenance += sum(k.arg in ("source", "source_url", "scraped_at") for k in node.keywords) if name != "Source" else 0
            elif isinstance(node, ast.FunctionDef):
                functions.append((node.end_lineno - node.lineno + 1, f"{path.stem}.{node.name}"))  # type: ignore[operator]
    functions.sort(reverse=True)
    return {
        "scrapers/*.py lines": sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files),
        "source module lines": sum(len(f.read_text(encoding="utf-8").splitlines()) for f in sources),
        "Offer( calls / lines": f"{offer_calls} / {offer_lines}",
        "literal =None args in Offer(": none_args,
        "source=/source_url=/scraped_at= in source modules": provenance,
        "longest functions": ", ".join(f"{name} {n}" for n, name in functions[:6]),
    }


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    for key, value in figures(root).items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
