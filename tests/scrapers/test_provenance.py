"""Every fixture body says where it came from, once, and `gpucat sources` shows the summary."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.scrapers import all_sources
from gpucat.scrapers._provenance import KINDS, fixture_provenance, provenance_summary
from gpucat.scrapers.capture import read_manifest
from tests.conftest import FIXTURES


@pytest.mark.parametrize("name", sorted(all_sources()))
def test_every_body_has_exactly_one_provenance_line(name):
    source = all_sources()[name]
    folder = FIXTURES / source.provider / source.name
    bodies = [e.body.name for e in read_manifest(folder)]
    real = folder / "real"
    bodies += [f"real/{p.name}" for p in sorted(real.iterdir())] if real.is_dir() else []
    lines = fixture_provenance(source.provider, source.name)
    assert sorted(b.body for b in lines) == sorted(bodies)
    assert all(b.kind in KINDS and b.where for b in lines)
    # A real or derived body names where it came from: a repository (owner/name) or the index's file id.
    for b in lines:
        if b.kind != "written":
            assert "/" in b.where or "file id" in b.where, (name, b)


def test_the_summary_counts_kinds_best_first(tmp_path):
    folder = tmp_path / "p" / "s"
    folder.mkdir(parents=True)
    (folder / "NOTES.md").write_text(
        "# s\n\nA line like - `x.json`: **real** above the section does not count.\n\n## Provenance\n\n"
        "- `a.json`: **written**. From the docs.\n- `real/b.json`: **real**. o/r `p` @ abc, 2026-08-22.\n- `c.json`: **written**. Docs.\n"
    )
    assert provenance_summary("p", "s", tmp_path) == "real 1, written 2"
    assert provenance_summary("p", "missing", tmp_path) == "unknown"


def test_gpucat_sources_shows_each_sources_fixture_provenance():
    result = CliRunner().invoke(app, ["sources", "--json"])
    rows = {r["source"]: r for r in json.loads(result.stdout)}
    assert rows["vast-bundles"]["fixtures"] == "real 1, written 2"
    assert rows["seeweb"]["fixtures"] == "derived 1"
    assert rows["lambda-page"]["fallback_for"] == "lambda-instance-types"
    assert all(r["fixtures"] != "unknown" for r in rows.values())
