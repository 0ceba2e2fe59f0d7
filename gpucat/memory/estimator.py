"""Peak GPU memory of a fine-tuning run: the estimate as the commands and the API return it.

`estimate_memory` computes first (`gpucat.memory.breakdown`, bytes, nothing in words), then
explains (`gpucat.memory.notes`), then rounds into a `MemoryEstimate`. The breakdown lists what
is live at the peak moment and sums to `per_gpu_gb`; `phases_gb` gives both moments.

Units: bytes internally, GB (10^9 bytes) in `MemoryEstimate`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from gpucat.memory.archs import ModelArch, lora_targets
from gpucat.memory.bands import band_gb, error_band
from gpucat.memory.breakdown import (
    CUDA_CONTEXT_GB,
    FITTED,
    GB,
    NCCL_GB,
    OPTIMIZER_STEP,
    FittedConstants,
    MemoryBreakdown,
    memory_breakdown,
)
from gpucat.memory.notes import assumptions, not_modelled
from gpucat.memory.settings import TrainSettings, validate_settings

__all__ = ["ALLOCATOR_MARGIN", "CUDA_CONTEXT_GB", "FITTED", "NCCL_GB", "FittedConstants", "MemoryEstimate",
           "estimate_memory", "per_gpu_need", "summarize"]

ALLOCATOR_MARGIN = FITTED.allocator_margin


@dataclass(frozen=True)
class MemoryEstimate:
    model: str
    settings: TrainSettings
    total_params: int
    trainable_params: int
    per_gpu_gb: float  # what must fit on each GPU (nvidia-smi view), GB = 1e9 bytes
    breakdown: dict[str, float]  # component -> GB, live at the peak; sums to per_gpu_gb
    peak_phase: str  # "forward-backward" or "optimizer-step"
    phases_gb: dict[str, float]  # per-GPU total at each of the two moments
    host_gb: float  # host RAM per GPU process holding offloaded state
    host_breakdown: dict[str, float]
    requires: dict[str, bool]  # hardware/kernel needs: bf16 support, NF4 / int8 kernels
    assumptions: list[str] = field(default_factory=list)
    # The measured peak is likely within [low, high] (gpucat.memory.bands.band_gb): the estimate
    # divided by (1 + the 90th and 10th percentile of the leave-one-source-out signed error of its
    # method/sharding class), widened to contain the estimate: low <= per_gpu_gb <= high.
    per_gpu_gb_low: float | None = None
    per_gpu_gb_high: float | None = None
    error_band: dict | None = None
    # Mechanisms this configuration touches that the estimate does not model; the CLI prints them.
    not_modelled: list[str] = field(default_factory=list)
    # The bytes the figures above were rounded from and the notes rendered from (not in `to_dict`).
    detail: MemoryBreakdown | None = field(default=None, repr=False, compare=False)

    def torch_allocated_gb(self) -> float:
        """The estimate as `torch.cuda.max_memory_allocated` would report it: no context, no
        allocator margin, and no paged optimizer states (they live outside PyTorch's allocator)."""
        skip = {"cuda_context", "nccl_buffers", "allocator_margin"}
        paged = self.breakdown.get("optimizer_states", 0.0) if self.settings.optimizer.startswith("paged") else 0.0
        return sum(v for k, v in self.breakdown.items() if k not in skip) - paged

    def torch_reserved_gb(self) -> float:
        """The estimate as `torch.cuda.max_memory_reserved` would report it."""
        return self.torch_allocated_gb() + self.breakdown.get("allocator_margin", 0.0)

    def metrics_gb(self) -> dict[str, float]:
        """The estimate in each metric a measurement may use: nvidia-smi (everything: what must fit),
        reserved (`torch.cuda.max_memory_reserved`) and allocated (`max_memory_allocated`)."""
        return {"nvidia-smi": self.per_gpu_gb, "reserved": round(self.torch_reserved_gb(), 3),
                "allocated": round(self.torch_allocated_gb(), 3)}

    def in_metric(self, metric: str) -> tuple[float, float | None, float | None]:
        """(estimate, band low, band high) in one metric; the band keeps its relative width."""
        value = self.metrics_gb()[metric]
        scale = value / self.per_gpu_gb if self.per_gpu_gb else 1.0
        low = None if self.per_gpu_gb_low is None else round(self.per_gpu_gb_low * scale, 3)
        high = None if self.per_gpu_gb_high is None else round(self.per_gpu_gb_high * scale, 3)
        return value, low, high

    def to_dict(self) -> dict[str, Any]:
        out = asdict(replace(self, detail=None))
        del out["detail"]
        out["metrics_gb"] = self.metrics_gb()
        settings = out["settings"]
        settings["lora_targets"] = list(lora_targets(self.settings.lora_targets))
        # Options that do not apply to the method are shown as null, not as their defaults.
        if self.settings.method != "qlora":
            settings["quant"] = None
        if self.settings.method == "full":
            settings.update(lora_rank=None, lora_targets=None, lora_dropout=None)
        return out


def estimate_memory(
    arch: ModelArch, settings: TrainSettings, fitted: FittedConstants = FITTED, *, with_band: bool = True
) -> MemoryEstimate:
    """Peak memory per GPU for fine-tuning `arch` with `settings`, with its breakdown and error band."""
    validate_settings(arch, settings)
    return summarize(memory_breakdown(arch, settings, fitted), with_band=with_band)


def summarize(b: MemoryBreakdown, *, with_band: bool = True) -> MemoryEstimate:
    """The breakdown in GB, with its notes and, when asked, its error band."""
    s = b.settings
    per_gpu_gb = round(sum(b.components.values()) / GB, 3)
    band = error_band(s) if with_band else None
    low, high = band_gb(per_gpu_gb, band) if band is not None else (None, None)
    return MemoryEstimate(
        model=b.arch.name,
        settings=s,
        total_params=b.counts.total,
        trainable_params=b.trainable,
        per_gpu_gb=per_gpu_gb,
        breakdown={k: round(v / GB, 3) for k, v in b.components.items() if v > 0},
        peak_phase=b.peak_phase,
        phases_gb={phase: 0.0 if phase == OPTIMIZER_STEP and s.optimizer_in_backward else round(total / GB, 3)
                   for phase, total in b.totals.items()},
        host_gb=round(sum(b.host.values()) / GB, 3),
        host_breakdown={k: round(v / GB, 3) for k, v in b.host.items() if v > 0},
        requires={"bf16": s.precision.startswith("bf16"),
                  "nf4": s.method == "qlora" and s.quant.startswith("nf4"),
                  "int8": s.method == "qlora" and s.quant == "int8"},
        assumptions=assumptions(b),
        per_gpu_gb_low=None if low is None else round(low, 3),
        per_gpu_gb_high=None if high is None else round(high, 3),
        error_band=band,
        not_modelled=not_modelled(b.arch, s),
        detail=b,
    )


def per_gpu_need(
    arch: ModelArch, settings: TrainSettings, gpu_counts: tuple[int, ...] = (1, 2, 4, 8, 16)
) -> dict[int, MemoryEstimate]:
    """The estimate for each GPU count, same settings otherwise (for the `fit` query)."""
    return {count: estimate_memory(arch, replace(settings, gpus=count)) for count in gpu_counts}
