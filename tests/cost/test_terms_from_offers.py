"""A marketplace host's own disk and bandwidth prices, carried on its offer, price the job."""

from __future__ import annotations

from gpucat.cost.jobcost import EgressTerms, EgressTier, StorageTerms
from gpucat.cost.terms import offer_egress, offer_storage


def test_an_offer_with_host_prices_brings_its_own_storage_and_egress():
    row = {"storage_usd_per_gb_month": 0.15, "egress_usd_per_gb": 0.001}
    assert offer_storage(row) == [StorageTerms("the host's disk (per offer)", 0.15, 0.15)]
    assert offer_egress(row) == EgressTerms(tiers=(EgressTier(0.0, None, 0.001),))


def test_an_offer_without_host_prices_leaves_the_provider_terms_to_apply():
    assert offer_storage({"storage_usd_per_gb_month": None}) == []
    assert offer_egress({}) is None
