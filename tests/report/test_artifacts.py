"""The refresh flow's price artifacts: the report's headline as a table and a Markdown bar chart."""

from __future__ import annotations

import prefect.artifacts

import gpucat.flows.refresh
from gpucat.warehouse.db import connect


def test_publish_price_artifacts_sends_the_headline(catalog_db, monkeypatch):
    sent: dict[str, dict] = {}
    monkeypatch.setattr(gpucat.flows.refresh, "create_table_artifact", lambda **kw: sent.setdefault(kw["key"], kw))
    monkeypatch.setattr(prefect.artifacts, "create_markdown_artifact", lambda **kw: sent.setdefault(kw["key"], kw))
    with connect(catalog_db, read_only=True) as con:
        gpucat.flows.refresh.publish_price_artifacts(con, "catalog-0123abcd", catalog_db)
        models = {m for (m,) in con.execute("SELECT DISTINCT gpu_model FROM current_offers WHERE usd_per_gpu_hour > 0").fetchall()}
    assert {r["gpu_model"] for r in sent["price-headline-catalog-0123abcd"]["table"]} == models
    assert "█" in sent["price-headline-chart-catalog-0123abcd"]["markdown"]
    assert all(str(catalog_db) in artifact["description"] for artifact in sent.values())
