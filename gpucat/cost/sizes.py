"""How much a job stores and downloads: dataset, base weights, checkpoints, the result. GB = 10^9 bytes.

A checkpoint holds what a resumed run needs: the trainable weights, their optimizer states and
(with mixed precision) fp32 master weights. LoRA/QLoRA checkpoints hold only the adapter; the
frozen base weights are stored once. The download at the end is the trained weights in bf16:
the whole model after full fine-tuning, the adapter otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucat.cost.throughput import ModelShape, model_shape
from gpucat.memory import ModelArch, TrainSettings

BYTES_PER_TOKEN_OF_TEXT = 4.0  # tokenized training text: about 4 bytes of UTF-8 per token
CHECKPOINTS_KEPT = 2  # the newest and the one being written (a crash mid-write keeps the last good)
GB = 1e9


@dataclass(frozen=True)
class JobSizes:
    dataset_gb: float
    base_weights_gb: float
    checkpoint_gb: float
    storage_gb: float  # dataset + base weights + the kept checkpoints
    result_gb: float  # downloaded at the end


def optimizer_state_bytes(settings: TrainSettings) -> float:
    mixed = settings.precision in ("bf16-mixed", "fp16-mixed", "fp32")
    if settings.optimizer in ("adamw-8bit", "paged-adamw-8bit"):
        return 2.0
    if settings.optimizer == "adamw":
        return 8.0 if mixed else 4.0
    if settings.optimizer == "sgd":
        return 0.0
    return 1.0  # adafactor: factored second moments, a small fraction of the weights


def job_sizes(shape: ModelShape, settings: TrainSettings, tokens_per_epoch: float, dataset_gb: float | None) -> JobSizes:
    weight_bytes = 4 if settings.precision == "fp32" else 2
    master = 4 if settings.precision in ("bf16-mixed", "fp16-mixed") else 0
    per_trainable = weight_bytes + master + optimizer_state_bytes(settings)
    dataset = dataset_gb if dataset_gb is not None else tokens_per_epoch * BYTES_PER_TOKEN_OF_TEXT / GB
    base = shape.params * 2 / GB
    checkpoint = shape.trainable_params * per_trainable / GB
    result = shape.trainable_params * 2 / GB
    return JobSizes(
        dataset_gb=dataset,
        base_weights_gb=base,
        checkpoint_gb=checkpoint,
        storage_gb=dataset + base + CHECKPOINTS_KEPT * checkpoint,
        result_gb=result,
    )


def kept_on_disk_gb(arch: ModelArch, settings: TrainSettings, tokens_per_epoch: float = 0.0, dataset_gb: float | None = None) -> float:
    """What a job keeps on its instance's disk: dataset, base weights and the kept checkpoints.
    Without tokens or a dataset size (`gpucat fit`), the weights and checkpoints alone."""
    return job_sizes(model_shape(arch, settings), settings, tokens_per_epoch, dataset_gb).storage_gb
