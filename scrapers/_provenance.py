"""Where each source's fixture bodies came from, read from its folder's NOTES.md.

Each `fixtures/<provider>/<source>/NOTES.md` ends with a `## Provenance` section: one line per
body, `- \\`<body>\\`: **real|derived|written**. <repository, path, commit, capture date>`.
*real* is an answer as a provider served it (trimmed at most), *derived* is reshaped from a real
answer, *written* is made by hand from docs and samples. The notes are the one place this is
said; `gpucat sources` and the README's table summarise it per source, and a test holds every
body to exactly one line. Outside a checkout (no fixtures folder) the summary is "unknown".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KINDS = ("real", "derived", "written")
_LINE = re.compile(r"^- `(?P<body>[^`]+)`: \*\*(?P<kind>real|derived|written)\*\*\.?\s*(?P<where>.*)$", re.MULTILINE)


@dataclass(frozen=True)
class BodyProvenance:
    body: str  # path inside the source's fixture folder
    kind: str  # real | derived | written
    where: str  # repository, path, commit and capture date, as the notes give them


def fixture_provenance(provider: str, source: str, root: Path = FIXTURES) -> list[BodyProvenance]:
    notes = root / provider / source / "NOTES.md"
    if not notes.is_file():
        return []
    text = notes.read_text(encoding="utf-8")
    section = text[text.find("\n## Provenance"):] if "\n## Provenance" in text else ""
    return [BodyProvenance(m["body"], m["kind"], m["where"].strip()) for m in _LINE.finditer(section)]


def provenance_summary(provider: str, source: str, root: Path = FIXTURES) -> str:
    """E.g. "real 1, written 2": how many bodies of each kind, best first; "unknown" without notes."""
    bodies = fixture_provenance(provider, source, root)
    if not bodies:
        return "unknown"
    return ", ".join(f"{kind} {n}" for kind in KINDS if (n := sum(b.kind == kind for b in bodies)))
