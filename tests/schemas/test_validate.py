"""One pandera pass over several sources' records gives each source what validating it alone gives."""

from __future__ import annotations

import pytest

from gpucat.schemas.errors import ParseError
from gpucat.schemas.validate import Validated, validate, validate_each
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
