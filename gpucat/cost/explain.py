"""The words around a ranked job cost: `--explain`'s lines for one row and the assumptions printed
with every answer, rendered from the typed breakdown `rank.job_costs` returns (the money part by
`jobcost.job_cost_lines`); nothing here computes a figure the breakdown does not already hold.
"""

from __future__ import annotations

from typing import Any

from gpucat.cost.sizes import BYTES_PER_TOKEN_OF_TEXT, CHECKPOINTS_KEPT, JobSizes
from gpucat.cost.throughput import DEFAULT_FABRIC_GBITPS, PCIE_GBPS


def row_lines(row: Any) -> tuple[str, ...]:  # a rank.CostRow (rank imports this module)
    """`--explain`: the configuration, its throughput and time, the money arithmetic and the likely range."""
    b = row.breakdown
    if b is None:
        return ()
    tp, hw = b.throughput, b.hardware
    head = (
        f"{row.provider} {row.offer_id}: {hw.gpus} x {hw.gpu_model} ({row.nodes} node(s), {row.market})",
        f"throughput: {tp.tokens_per_s:,.0f} tokens/s ({tp.flops_per_token / 1e9:.1f} GFLOP/token, utilization "
        f"{tp.utilization:.2f} of {hw.peak_tflops:g} TFLOPS, scaling efficiency {tp.scaling_efficiency:.2f})",
        f"time: {b.training_tokens:,.0f} tokens / {tp.tokens_per_s:,.0f} tokens/s = {b.train_h:.3f} h"
        + "".join(f" + {name} {h:.3f} h" for name, h in b.fixed_h.items()) + f" = {b.job_cost.job.hours:.3f} h",
        *(f"  assumed: {a}" for a in tp.assumptions),
    )
    low, high = b.error_band
    return head + b.job_cost.lines + (
        f"likely range (LOSO error band x{low:.2f}..x{high:.2f} on throughput): "
        f"{row.hours_range[0]:.2f}-{row.hours_range[1]:.2f} h, ${row.total_range[0]:.2f}-${row.total_range[1]:.2f}",
    )


def defaults(options: Any, sizes: JobSizes) -> list[str]:  # a rank.CostOptions
    """Every assumed value of a job cost, printed with the answer."""
    from gpucat.cost.terms import spot_defaults

    dataset = (
        f"dataset {sizes.dataset_gb:.2f} GB (--dataset-gb)" if options.dataset_gb is not None
        else f"dataset {sizes.dataset_gb:.2f} GB: {BYTES_PER_TOKEN_OF_TEXT:g} bytes of text per token (set --dataset-gb)"
    )  # fmt: skip
    return [
        f"training tokens {options.tokens:,.0f} x {options.epochs:g} epoch(s)",
        dataset,
        f"stored: dataset + base weights {sizes.base_weights_gb:.2f} GB + {CHECKPOINTS_KEPT} checkpoints of {sizes.checkpoint_gb:.3f} GB",
        f"downloaded at the end: {sizes.result_gb:.3f} GB of trained weights (bf16)",
        f"storage kept for the run + {options.retention_h:g} h retention (--retention), on the provider's cheapest storage that survives a stop",
        "egress: the provider's monthly free allowance is assumed unused by other traffic",
        "a term a provider does not publish is left out of its total and named (storage ?, egress ?)",
        f"spot: checkpoint every {options.checkpoint_every_h:g} h (--checkpoint-every), {options.restart_h * 60:g} min to restart,"
        f" checkpoints written at {options.checkpoint_write_gbps:g} GB/s",
        f"spot rates where none is published: {spot_defaults()['default']['basis']} ({spot_defaults()['default']['interruptions_per_hour']}/h)",
        f"links without a catalog figure: PCIe {PCIE_GBPS:g} GB/s, fabric {DEFAULT_FABRIC_GBITPS:g} Gbit/s per node",
        f"wall-clock adds reading the base weights at {options.load_gbps:g} GB/s, a checkpoint save every"
        f" {options.checkpoint_every_h:g} h and {options.eval_tokens:,.0f} evaluation tokens",
        "hours and totals are shown as a likely range: the time model's leave-one-source-out error band"
        " (bench/cost_calibration.py); rows whose ranges overlap are near-ties (~)",
    ]
