"""Live checks: every keyless source (and each keyed one whose key is set) fetched for real.

`uv run pytest -m live` on a machine with internet. Each source goes through the real fetch code
(`pipeline.fetch_source`) and its parser, then must: parse; reach its usual row count (half the
rows its bundled fixtures give, the load's own collapse limit); map at least 95% of its GPU rows;
and price every offer inside the catalog's plausibility band (1/50 to 50x the bundled catalog's
median for the model, as the quarantine judges a batch). Offline, everything is skipped with one
reason. `GPUCAT_LIVE_RECORD=DIR` keeps every response as a capture for `--replay`.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest

from gpucat import pipeline
from gpucat.schemas.records import Offer, Rejected
from gpucat.scrapers import all_sources
from gpucat.scrapers.normalize import rates_by_currency
from gpucat.warehouse import db, quarantine
from gpucat.warehouse.load import MIN_ROW_RATIO
from tests.conftest import FIXTURES
from tests.drift_checks import fixture_rates, replayed_pages

pytestmark = pytest.mark.live

PROBE = ("www.ecb.europa.eu", 443)
MIN_MAPPED_SHARE = 0.95
_UNMAPPED = ("unknown_gpu", "ambiguous_gpu", "memory_mismatch")


def _online() -> str | None:
    """None when the internet answers, else why not (a 3-second DNS and TCP probe)."""
    try:
        with socket.create_connection(PROBE, timeout=3):
            return None
    except OSError as exc:
        return f"offline: cannot reach {PROBE[0]}:{PROBE[1]} ({exc.__class__.__name__})"


@pytest.fixture(scope="session")
def online() -> None:
    reason = _online()
    if reason:
        pytest.skip(reason)


def _fetch(source) -> list:
    work = Path(tempfile.mkdtemp(prefix="gpucat-live-"))
    record = os.environ.get("GPUCAT_LIVE_RECORD")
    options = pipeline.FetchOptions(workdir=work, record_dir=Path(record) if record else None)
    return pipeline.fetch_source(source, options).pages


@pytest.fixture(scope="session")
def live_rates(online) -> dict:
    """Today's rates from the live rates sources, so non-USD prices convert with the rate of their day."""
    first = [s for s in all_sources().values() if s.loads_first]
    return rates_by_currency(item for s in first for item in pipeline.parse_source(s, _fetch(s)))


@pytest.fixture(scope="session")
def medians(catalog_db) -> dict[str, float]:
    with db.connect(catalog_db, read_only=True) as con:
        return quarantine.catalog_medians(con)


def _usual_rows(source) -> int:
    items = pipeline.parse_source(source, replayed_pages(source, FIXTURES), fixture_rates(FIXTURES))
    return sum(not isinstance(i, Rejected) for i in items)


def _runnable(source) -> str | None:
    if source.api_key_required and not os.environ.get(source.api_key_env or ""):
        return f"{source.api_key_env} is not set"
    return None


@pytest.mark.parametrize("name", sorted(all_sources()))
def test_a_live_answer_parses_maps_and_prices_plausibly(name, online, live_rates, medians):
    source = all_sources()[name]
    if (why := _runnable(source)) is not None:
        pytest.skip(f"{name}: keyed source, {why}")
    items = pipeline.parse_source(source, _fetch(source), live_rates)
    rows = [i for i in items if not isinstance(i, Rejected)]
    usual = _usual_rows(source)
    assert len(rows) >= MIN_ROW_RATIO * usual, f"{name}: {len(rows)} rows, under {MIN_ROW_RATIO:.0%} of the usual {usual}"
    if "offers" not in source.tables:
        return
    offers = [i for i in items if isinstance(i, Offer)]
    unmapped = [r for r in items if isinstance(r, Rejected) and r.table == "offers" and any(x.startswith(_UNMAPPED) for x in r.reasons)]
    share = len(offers) / max(1, len(offers) + len(unmapped))
    assert share >= MIN_MAPPED_SHARE, f"{name}: {share:.1%} of GPU rows mapped; unmapped e.g. {[r.reasons for r in unmapped[:5]]}"
    band = quarantine.PLAUSIBLE_BAND
    implausible = [
        (o.gpu_model, o.usd_per_gpu_hour)
        for o in offers
        if o.gpu_model in medians and not medians[o.gpu_model] / band <= (o.usd_per_gpu_hour or 0) <= medians[o.gpu_model] * band
    ]
    assert not implausible, f"{name}: prices outside 1/{band:g}..{band:g}x the catalog median: {implausible[:5]}"


def test_the_offline_probe_answers_quickly_either_way():
    """Not live itself in what it checks: the probe returns None or a one-line reason."""
    reason = _online()
    assert reason is None or (reason.startswith("offline: ") and "\n" not in reason)
