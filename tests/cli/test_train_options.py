"""One definition of the training options: every command that takes them shows the same flags."""

from __future__ import annotations

import typer.main

from gpucat.cli import app
from gpucat.cli._train_options import _options
from gpucat.memory import TrainingRequest, TrainSettings, get_model_arch

TRAINING = {p.name for p in _options(gpus=True, default_sharding="none")}


def params(command: str) -> dict[str, tuple]:
    click = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    return {p.name: (tuple(p.opts), p.help) for p in click.params if p.name in TRAINING}


def test_memory_and_fit_take_the_same_training_options():
    memory, fit = params("memory"), params("fit")
    assert set(memory) == TRAINING
    assert set(fit) == TRAINING - {"gpus"}  # fit tries 1, 2, 4, ... GPUs itself
    assert all(fit[name] == memory[name] for name in fit)


def test_a_request_becomes_typed_settings():
    arch = get_model_arch("llama-3.1-8b")
    settings = TrainingRequest(model="llama-3.1-8b", method="qlora", batch=4, seq_len=1024, grad_accum=2, lora_rank=8).settings(arch)
    assert settings == TrainSettings(method="qlora", batch_size=4, seq_len=1024, grad_accumulation=2, lora_rank=8)
