"""Fine-tuning memory estimator: which GPU memory a training run needs, component by component.

Public API (what `gpucat memory` and `gpucat fit` call):

    arch = resolve_model("llama-3.1-8b")                   # or load_config_file("config.json")
    settings = TrainSettings(method="qlora", batch_size=4, seq_len=2048)
    estimate = estimate_memory(arch, settings)             # .per_gpu_gb, .breakdown, .assumptions
    detail = memory_breakdown(arch, settings)              # the same in bytes, before rounding and words
    by_count = per_gpu_need(arch, settings, (1, 2, 4, 8))  # {gpus: MemoryEstimate}

Everything here imports only the standard library (httpx is imported when the Hub is used).
"""

from gpucat.memory.archs import (
    LORA_TARGET_PRESETS,
    ModelArch,
    find_model_arch,
    get_model_arch,
    load_model_archs,
    lora_trainable_params,
    param_counts,
)
from gpucat.memory.breakdown import MemoryBreakdown, memory_breakdown
from gpucat.memory.estimator import MemoryEstimate, estimate_memory, per_gpu_need
from gpucat.memory.hf_config import (
    arch_from_hf_config,
    fetch_hf_config,
    load_config_file,
    load_hub_config,
    resolve_model,
)
from gpucat.memory.options import TrainingRequest, model_from_options
from gpucat.memory.settings import TrainSettings, validate_settings

__all__ = [
    "LORA_TARGET_PRESETS",
    "MemoryBreakdown",
    "MemoryEstimate",
    "ModelArch",
    "TrainSettings",
    "TrainingRequest",
    "arch_from_hf_config",
    "estimate_memory",
    "fetch_hf_config",
    "find_model_arch",
    "get_model_arch",
    "load_config_file",
    "load_hub_config",
    "load_model_archs",
    "lora_trainable_params",
    "memory_breakdown",
    "model_from_options",
    "param_counts",
    "per_gpu_need",
    "resolve_model",
    "validate_settings",
]
