"""One pandera pass over several sources' records gives each source what validating it alone gives."""

from __future__ import annotations

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import Rejected, RowText, Skipped, row_json
from gpucat.schemas.validate import Validated, collect, validate, validate_each
from tests.factories import offer


def same(a: Validated, b: Validated) -> bool:
    return a.table == b.table and a.frame.equals(b.frame) and a.rejected == b.rejected


def test_each_group_gets_exactly_what_validating_it_alone_gives():
    groups = [
        [offer(offer_id="a1"), offer(offer_id="a2", usd_per_gpu_hour=-1.0), offer(offer_id="a3")],
        [offer(provider="other", offer_id="b1", gpu_model="NOT-A-GPU"), offer(provider="other", offer_id="b2")],
        [],
        [offer(offer_id="c1", market="weekly"), offer(offer_id="c1"), offer(offer_id="c2", usd_per_hour=1.0)],
    ]
    joint = validate_each("offers", groups)
    alone = [validate("offers", group) for group in groups]
    assert len(joint) == len(alone)
    for got, want in zip(joint, alone, strict=True):
        assert isinstance(got, Validated)
        assert same(got, want)
    # and the rejections are where they belong
    assert [[r.row["offer_id"] for r in v.rejected] for v in alone] == [["a2"], ["b1"], [], ["c1", "c1", "c2"]]


def test_the_same_key_in_two_groups_is_no_duplicate():
    """Keys are unique per source: two sources may list the same offer id."""
    [first, second] = validate_each("offers", [[offer()], [offer()]])
    assert isinstance(first, Validated) and isinstance(second, Validated)
    assert (first.frame.height, second.frame.height, first.rejected, second.rejected) == (1, 1, [], [])


def test_a_whole_batch_failure_stays_with_its_group(monkeypatch: pytest.MonkeyPatch):
    import gpucat.schemas.validate as validate_module

    real = validate_module._failures

    def failures(contract, frame):  # a failure without a row index, in any batch holding the "broken" row
        if frame.height and frame["offer_id"].to_list().count("broken"):
            raise ParseError("offers: batch does not match the schema: usd_per_hour: dtype")
        return real(contract, frame)

    monkeypatch.setattr(validate_module, "_failures", failures)
    good, bad = [offer(offer_id="ok", usd_per_gpu_hour=-1.0), offer(offer_id="ok2")], [offer(offer_id="broken")]
    results = validate_each("offers", [good, bad])
    assert isinstance(results[1], ParseError) and "does not match the schema" in str(results[1])
    assert isinstance(results[0], Validated) and same(results[0], validate("offers", good))


def test_a_collected_stream_validates_as_its_records_do_across_chunk_edges():
    """A refresh holds a source's records as frames of a few rows (`collect`): duplicates and
    conflicts that straddle two chunks, schema failures and rows rejected while parsing come out
    exactly as validating the records whole gives them."""
    raw = {"id": 7, "gpu_name": "RTX 9090", "tags": ["a", None], "nested": {"x": 1.5}}
    records = [
        offer(offer_id="a1"),
        offer(offer_id="a2", usd_per_gpu_hour=-1.0),  # fails the schema
        offer(offer_id="a1"),  # same content, next chunk: duplicate_key
        offer(offer_id="c1", region="eu-west-1"),
        offer(offer_id="c1"),  # different content, next chunk: conflicting_duplicate_key on both
        offer(offer_id="a3", source_url="https://prices.example.com/v2/index.csv"),
        offer(offer_id="a4"),
    ]
    parse_time = Rejected("offers", ("unknown_gpu: 'RTX 9090'",), raw)
    collected = collect([records[0], parse_time, *records[1:], Skipped("cpu_only", 4, ("c5",))], chunk_rows=2)
    assert [f.height for f in collected.frames["offers"]] == [2, 2, 2, 1]
    assert (collected.skipped, collected.rows) == (4, 8)
    [stored] = collected.rejected
    assert stored == parse_time and isinstance(stored.row, RowText)
    assert row_json(stored.row) == row_json(raw) and stored.row["nested"] == {"x": 1.5}
    [joint] = validate_each("offers", [collected.frame("offers")])
    assert isinstance(joint, Validated)
    assert same(joint, validate("offers", records))
    assert [(r.row["offer_id"], r.reasons[0].split(":")[0]) for r in joint.rejected] == [
        ("a1", "duplicate_key"), ("c1", "conflicting_duplicate_key"), ("c1", "conflicting_duplicate_key"), ("a2", "usd_per_gpu_hour")
    ]  # fmt: skip


def test_repeated_text_shares_its_bytes_and_keeps_its_values():
    records = [offer(offer_id=f"o{i}", source_url=f"https://prices.example.com/{i % 2}") for i in range(6)]
    frame = collect(records, chunk_rows=4).frame("offers")
    assert frame["source_url"].to_list() == [f"https://prices.example.com/{i % 2}" for i in range(6)]
    assert frame["offer_id"].to_list() == [f"o{i}" for i in range(6)]


def test_rows_that_are_not_plain_json_stay_dicts():
    """A rejected record's own row (times, dates) would not read back as itself from its text."""
    row = offer().as_row()
    [kept] = collect([Rejected("offers", ("unknown_gpu: 'gpu8'",), row)]).rejected
    assert kept.row is row
