from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from gpucat import pipeline
from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import ExchangeRate, Offer, Rejected
from gpucat.scrapers import get_source
from gpucat.scrapers.capture import rehash
from gpucat.scrapers.normalize import latest_rates, normalize_offer
from gpucat.warehouse import db
from tests.conftest import FIXTURES
from tests.scrapers.helpers import parse_bytes, parse_fixture, plain

URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
SCRAPED = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
HEAD = (
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gesmes:Envelope xmlns:gesmes=\"http://www.gesmes.org/xml/2002-08-01\" "
    "xmlns=\"http://www.ecb.int/vocabulary/2002-08-01/eurofxref\">\n<gesmes:subject>Reference rates</gesmes:subject>\n"
)


def day(cubes: str, time: str = "2026-11-19") -> bytes:
    return f"{HEAD}<Cube>\n<Cube time='{time}'>\n{cubes}\n</Cube>\n</Cube>\n</gesmes:Envelope>\n".encode()


def rates() -> dict[str, dict]:
    return {r["currency"]: r for r in map(plain, parse_fixture("ecb-rates", "ecb/ecb-rates/eurofxref-daily.xml"))}


def test_whole_records_euro_and_pound():
    by_currency = rates()
    assert by_currency["EUR"] == {
        "table": "exchange_rates",
        "currency": "EUR",
        "usd_per_unit": 1.0705,
        "rate_date": date(2024, 6, 28),
        "source": "ecb-rates",
        "source_url": URL,
        "scraped_at": SCRAPED,
    }
    # 1 EUR = 1.0705 USD = 0.84638 GBP, so 1 GBP = 1.0705 / 0.84638 USD.
    assert by_currency["GBP"] == {**by_currency["EUR"], "currency": "GBP", "usd_per_unit": 1.0705 / 0.84638}


def test_every_listed_currency_but_usd_gets_a_usd_rate_with_the_files_date():
    by_currency = rates()
    assert len(by_currency) == 30  # 30 listed (USD among them), plus EUR itself
    assert "USD" not in by_currency
    assert {r["rate_date"] for r in by_currency.values()} == {date(2024, 6, 28)}
    assert by_currency["JPY"]["usd_per_unit"] == pytest.approx(1.0705 / 171.94)


@pytest.mark.parametrize(
    ("cubes", "reason"),
    [
        ("<Cube currency='USD' rate='1.16'/><Cube currency='GBP' rate='N/A'/>", "bad_rate: 'N/A'"),
        ("<Cube currency='USD' rate='1.16'/><Cube currency='GBP' rate='0'/>", "bad_rate: '0'"),
        ("<Cube currency='USD' rate='1.16'/><Cube currency='gbp' rate='0.88'/>", "bad_currency: 'gbp'"),
        ("<Cube currency='USD' rate='1.16'/><Cube rate='0.88'/>", "bad_currency: None"),
        ("<Cube currency='USD' rate='1.16'/><Cube currency='GBP' rate='0.88'/><Cube currency='GBP' rate='0.89'/>", "duplicate_currency: GBP"),
    ],
    ids=["placeholder-rate", "zero-rate", "lowercase-code", "missing-currency", "duplicate"],
)
def test_an_untrustworthy_rate_is_rejected_and_the_rest_load(cubes, reason):
    items = parse_bytes("ecb-rates", day(cubes), URL)
    assert [(r.table, r.reasons) for r in items if isinstance(r, Rejected)] == [("exchange_rates", (reason,))]
    assert [r["currency"] for r in items if not isinstance(r, Rejected)][0] == "EUR"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (day("<Cube currency='GBP' rate='0.88'/>"), "no USD rate"),
        (day(""), "no rates listed"),
        (day("<Cube currency='USD' rate='1.16'/>", time="19.11.2026"), "Invalid isoformat string: '19.11.2026'"),
        (HEAD.encode() + b"<Rates><Rate time='2026-11-19'/></Rates></gesmes:Envelope>", "no <Cube time"),
        (day("<Cube currency='USD' rate='1.16'/>")[:200], "not XML"),
        (b"<!DOCTYPE html><html><body>Service unavailable</body></html>", "not XML|no <Cube time"),
    ],
    ids=["no-usd", "empty-day", "other-date-format", "renamed-element", "truncated", "html-page"],
)
def test_bad_bodies_fail_the_source(body, message):
    with pytest.raises(ParseError, match=message):
        parse_bytes("ecb-rates", body, URL)


# An offer seen on the Monday after the ECB file of Friday 2024-06-28: the nearest earlier rate.
SEEN = datetime(2024, 7, 1, 6, 0, tzinfo=UTC)


def offer(currency: str, price: float = 2.5, price_unit: str = "instance_hour", count: float = 2, seen: datetime = SEEN) -> Offer:
    return Offer(
        provider="scaleway", offer_id="x", source="scaleway-products", instance_type="L4-2-24G", region="fr-par-2",
        market="on_demand", tier=None, gpu_name="L4", gpu_model="L4", gpu_count=count, gpu_memory_gb=None, vcpus=None,
        ram_gb=None, price=price, price_unit=price_unit, currency=currency, availability="unknown", available_count=None,
        interconnect=None, fabric=None, fabric_gbps=None, source_url="https://api.scaleway.com/x", scraped_at=seen,
    )  # fmt: skip


FIXTURE_RATES = {
    "EUR": ExchangeRate("EUR", 1.0705, date(2024, 6, 28), "ecb-rates", URL, SCRAPED),
    "GBP": ExchangeRate("GBP", 1.0705 / 0.84638, date(2024, 6, 28), "ecb-rates", URL, SCRAPED),
}


@pytest.mark.parametrize(
    ("currency", "price_unit", "usd_per_hour", "fx_rate_date"),
    [
        ("EUR", "instance_hour", round(2.5 * 1.0705, 6), date(2024, 6, 28)),
        ("EUR", "gpu_hour", round(2 * 2.5 * 1.0705, 6), date(2024, 6, 28)),
        ("GBP", "instance_hour", round(2.5 * 1.0705 / 0.84638, 6), date(2024, 6, 28)),
        ("USD", "instance_hour", 2.5, None),
    ],
)
def test_normalization_converts_with_the_rate_and_names_its_date(currency, price_unit, usd_per_hour, fx_rate_date):
    result = normalize_offer(offer(currency, price_unit=price_unit), FIXTURE_RATES)
    assert result == replace(
        offer(currency, price_unit=price_unit),
        usd_per_hour=usd_per_hour,
        usd_per_gpu_hour=round(usd_per_hour / 2, 6),
        gpu_memory_gb=24.0,
        fx_rate_date=fx_rate_date,
    )
    assert (result.price, result.currency) == (2.5, currency)  # the quote itself is kept


@pytest.mark.parametrize("currency", ["EUR", "CHF"])
def test_no_rate_loaded_rejects_the_offer_with_its_currency(currency):
    rates = {} if currency == "EUR" else FIXTURE_RATES
    result = normalize_offer(offer(currency), rates)
    assert isinstance(result, Rejected)
    assert (result.table, result.reasons, result.row["price"]) == ("offers", (f"no_exchange_rate: {currency}",), 2.5)


def rate(day: date, usd: float) -> ExchangeRate:
    return ExchangeRate("EUR", usd, day, "ecb-rates", URL, SCRAPED)


HISTORY = (rate(date(2026, 11, 12), 1.10), rate(date(2026, 11, 13), 1.11), rate(date(2026, 11, 16), 1.12), rate(date(2026, 11, 23), 1.20))


@pytest.mark.parametrize(
    ("seen", "usd_per_unit", "fx_rate_date"),
    [
        (datetime(2026, 11, 16, 9, 0, tzinfo=UTC), 1.12, date(2026, 11, 16)),  # the offer's own day
        (datetime(2026, 11, 15, 9, 0, tzinfo=UTC), 1.11, date(2026, 11, 13)),  # a Sunday: Friday's rate
        (datetime(2026, 11, 20, 23, 0, tzinfo=UTC), 1.12, date(2026, 11, 16)),  # a later rate is never used
        (datetime(2026, 11, 23, 0, 0, tzinfo=UTC), 1.20, date(2026, 11, 23)),  # seven days would also do
    ],
)
def test_each_offer_converts_with_the_rate_of_its_day_or_the_nearest_earlier(seen, usd_per_unit, fx_rate_date):
    result = normalize_offer(offer("EUR", seen=seen), {"EUR": HISTORY})
    assert isinstance(result, Offer)
    assert (result.usd_per_hour, result.fx_rate_date) == (round(2.5 * usd_per_unit, 6), fx_rate_date)


@pytest.mark.parametrize(
    ("seen", "reason"),
    [
        (datetime(2026, 11, 24, 0, 0, tzinfo=UTC), None),  # 1 day after the newest rate
        (datetime(2026, 11, 30, 23, 59, tzinfo=UTC), None),  # exactly 7 days: still fit
        (datetime(2026, 12, 1, 0, 0, tzinfo=UTC), "stale_exchange_rate: EUR rate of 2026-11-23 is 8 days older than the offer (2026-12-01); limit 7"),
        (datetime(2027, 8, 1, 0, 0, tzinfo=UTC), "stale_exchange_rate: EUR rate of 2026-11-23 is 251 days older than the offer (2027-08-01); limit 7"),
        (datetime(2026, 11, 11, 0, 0, tzinfo=UTC), "no_exchange_rate: EUR has no rate on or before 2026-11-11"),
    ],
)
def test_a_rate_over_seven_days_older_than_the_offer_rejects_it(seen, reason):
    result = normalize_offer(offer("EUR", seen=seen), {"EUR": HISTORY})
    if reason is None:
        assert isinstance(result, Offer) and result.fx_rate_date == date(2026, 11, 23)
    else:
        assert isinstance(result, Rejected)
        assert (result.reasons, result.row["price"], result.row["currency"]) == ((reason,), 2.5, "EUR")


def test_latest_rates_keeps_the_newest_day_of_each_currency():
    older = ExchangeRate("EUR", 1.05, date(2024, 6, 27), "ecb-rates", URL, SCRAPED)
    assert latest_rates([older, FIXTURE_RATES["EUR"], offer("USD")]) == {"EUR": FIXTURE_RATES["EUR"]}


def refresh(path: Path, names: list[str], replay: Path = FIXTURES) -> dict[str, tuple[str, str | None]]:
    con = db.connect(path)
    try:
        with tempfile.TemporaryDirectory() as work:
            runs = pipeline.refresh_sources(con, [get_source(n) for n in names], pipeline.FetchOptions(workdir=Path(work), replay_dir=replay), prerequisites=False)
    finally:
        con.close()
    return {run.source: (run.status, run.error) for run in runs}


def test_a_refresh_loads_the_rates_first_and_converts_with_them(tmp_path):
    path = tmp_path / "gpucat.duckdb"
    # Listed after the offer source: the refresh still loads the rates first.
    assert refresh(path, ["scaleway-products", "ecb-rates"]) == {"ecb-rates": ("ok", None), "scaleway-products": ("ok", None)}
    with db.connect(path, read_only=True) as con:
        row = con.execute(
            "SELECT price, currency, usd_per_hour, fx_rate_date FROM current_offers WHERE offer_id = 'H100-SXM-8-80G/fr-par-2/on_demand'"
        ).fetchone()
        stored = con.execute("SELECT count(*), min(rate_date), max(rate_date) FROM exchange_rates").fetchone()
    assert row == (25.3308, "EUR", round(25.3308 * 1.0705, 6), date(2024, 6, 28))
    assert stored == (30, date(2024, 6, 28), date(2024, 6, 28))


def test_without_any_loaded_rate_euro_offers_are_rejected_and_the_source_fails(tmp_path):
    path = tmp_path / "gpucat.duckdb"
    status, error = refresh(path, ["scaleway-products"])["scaleway-products"]
    assert (status, "no valid rows" in (error or "")) == ("failed", True)
    with db.connect(path, read_only=True) as con:
        reasons = {r for (r,) in con.execute("SELECT DISTINCT reasons[1] FROM rejected_rows WHERE source = 'scaleway-products'").fetchall()}
    assert "no_exchange_rate: EUR" in reasons


def test_a_failed_rates_fetch_falls_back_to_the_last_loaded_rates(tmp_path):
    path = tmp_path / "gpucat.duckdb"
    refresh(path, ["ecb-rates"])
    broken = tmp_path / "capture"
    shutil.copytree(FIXTURES, broken)
    (broken / "ecb" / "ecb-rates" / "eurofxref-daily.xml").write_text("<html>maintenance</html>")
    rehash(broken)
    outcome = refresh(path, ["ecb-rates", "scaleway-products"], replay=broken)
    assert [outcome["ecb-rates"][0], outcome["scaleway-products"][0]] == ["failed", "ok"]
    with db.connect(path, read_only=True) as con:
        assert con.execute("SELECT DISTINCT fx_rate_date FROM current_offers").fetchall() == [(date(2024, 6, 28),)]


def test_a_replayed_euro_source_seen_over_a_week_after_the_newest_rate_is_rejected_as_stale(tmp_path):
    path = tmp_path / "gpucat.duckdb"
    late = tmp_path / "capture"
    shutil.copytree(FIXTURES, late)
    manifest = late / "scaleway" / "scaleway-products" / "manifest.jsonl"
    manifest.write_text(manifest.read_text().replace('"fetched_at": "2024-07-01T', '"fetched_at": "2024-07-06T'))
    status, error = refresh(path, ["ecb-rates", "scaleway-products"], replay=late)["scaleway-products"]
    assert (status, "no valid rows" in (error or "")) == ("failed", True)
    with db.connect(path, read_only=True) as con:
        reasons = {r for (r,) in con.execute("SELECT DISTINCT reasons[1] FROM rejected_rows WHERE source = 'scaleway-products'").fetchall()}
    assert "stale_exchange_rate: EUR rate of 2024-06-28 is 8 days older than the offer (2024-07-06); limit 7" in reasons
