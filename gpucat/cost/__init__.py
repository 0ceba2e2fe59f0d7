"""What a whole fine-tuning job costs on each configuration it fits.

Public API (what `gpucat cost` calls):

    result = job_costs(con, arch, settings, CostOptions(tokens=200e6, epochs=3))
    result.rows          # CostRow per configuration, cheapest job first
    result.defaults      # every assumed value, to print with the answer

The time model (`throughput`), the sizes of what is stored and downloaded (`sizes`) and the money
arithmetic (`jobcost`) are pure functions; `rank` reads the catalog and the provider terms.
"""

from gpucat.cost.jobcost import BillingTerms, EgressTerms, EgressTier, JobCost, JobSpec, PricedOffer, SpotRisk, job_cost
from gpucat.cost.rank import CostOptions, CostResult, CostRow, job_costs
from gpucat.cost.throughput import Factors, Hardware, ModelShape, Throughput, load_factors, model_shape, throughput

__all__ = [
    "BillingTerms",
    "CostOptions",
    "CostResult",
    "CostRow",
    "EgressTerms",
    "EgressTier",
    "Factors",
    "Hardware",
    "JobCost",
    "JobSpec",
    "ModelShape",
    "PricedOffer",
    "SpotRisk",
    "Throughput",
    "job_cost",
    "job_costs",
    "load_factors",
    "model_shape",
    "throughput",
]
