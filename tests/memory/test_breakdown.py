"""Compute, then explain: the estimate is a typed breakdown in bytes, and its words are rendered
from that breakdown alone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpucat.memory import TrainSettings, estimate_memory, get_model_arch
from gpucat.memory.breakdown import FITTED, FORWARD_BACKWARD, OPTIMIZER_STEP, memory_breakdown
from gpucat.memory.estimator import summarize
from gpucat.memory.notes import assumptions, not_modelled

LLAMA8 = get_model_arch("llama-3.1-8b")
T5 = get_model_arch("t5-base")
CASES = [
    pytest.param(LLAMA8, TrainSettings(method="qlora", lora_targets="qv", batch_size=2, seq_len=1024, grad_checkpointing=False),
                 id="qlora"),
    pytest.param(LLAMA8, TrainSettings(method="qlora", quant="int8", bnb_keeps_4bit_inputs=True), id="qlora-int8-old-bnb"),
    pytest.param(LLAMA8, TrainSettings(method="full", precision="bf16-mixed", gpus=8, sharding="zero3", offload="params",
                                        optimizer="paged-adamw-8bit"), id="zero3-param-offload"),
    pytest.param(LLAMA8, TrainSettings(method="lora", compile=True, offload_activations=True, optimizer_in_backward=True,
                                        gpus=2, sharding="ddp"), id="compiled-ddp"),
    pytest.param(T5, TrainSettings(method="full", target_len=64, seq_len=512, grad_accumulation=4, precision="fp32",
                                    gpus=1, sharding="zero2"), id="t5-fp32-zero2-one-gpu"),
]


@pytest.mark.parametrize(("arch", "settings"), CASES)
def test_the_estimate_is_its_breakdown_rounded_with_words_rendered_from_it(arch, settings):
    b = memory_breakdown(arch, settings)
    e = estimate_memory(arch, settings)
    assert e == summarize(b)
    assert e.detail == b
    assert e.per_gpu_gb == round(b.totals[b.peak_phase] / 1e9, 3)
    assert sum(b.components.values()) == pytest.approx(b.totals[b.peak_phase])
    assert b.totals[b.peak_phase] == max(b.totals.values()) or settings.optimizer_in_backward
    assert e.assumptions == assumptions(b)
    assert e.not_modelled == not_modelled(arch, settings)
    assert "detail" not in e.to_dict()


@pytest.mark.parametrize(("arch", "settings"), CASES)
def test_the_counterfactuals_the_notes_state_are_the_neighbouring_configurations(arch, settings):
    """What torch.compile would save and what older bitsandbytes would add are computed as the
    breakdown of the neighbouring configuration would compute them, not estimated for the note."""
    b = memory_breakdown(arch, settings)
    if settings.compile:
        assert b.compile_saving is None
    else:
        compiled = memory_breakdown(arch, replace(settings, compile=True)).activations
        assert b.compile_saving == pytest.approx(b.activations.saved + b.activations.recompute - compiled.saved - compiled.recompute)
    if settings.method != "qlora" or settings.bnb_keeps_4bit_inputs:
        assert b.old_bitsandbytes_extra is None
    else:
        old = memory_breakdown(arch, replace(settings, bnb_keeps_4bit_inputs=True)).activations
        assert b.old_bitsandbytes_extra == pytest.approx(old.saved - b.activations.saved)
        assert b.old_bitsandbytes_extra > 0


def test_notes_read_the_breakdown_not_the_arithmetic():
    """Change a computed figure in the breakdown and the note that states it changes with it: the
    words come from the breakdown, not from a second computation."""
    settings = TrainSettings(method="qlora", batch_size=2, seq_len=1024)
    b = memory_breakdown(LLAMA8, settings)
    edited = replace(b, compile_saving=3.21e9, old_bitsandbytes_extra=1.5e9, peak_phase=OPTIMIZER_STEP)
    notes = assumptions(edited)
    assert "torch.compile (TrainSettings.compile) recomputes pointwise intermediates in backward: 3.21 GB fewer" in " ".join(notes)
    assert "with older versions saved activations grow by 1.50 GB" in " ".join(notes)
    assert next(n for n in notes if n.startswith("peak at")).startswith("peak at the optimizer/step moment")
    assert b.peak_phase == FORWARD_BACKWARD


def test_the_fitted_constants_are_the_breakdowns_own():
    settings = TrainSettings(method="full", grad_checkpointing=False)
    wider = replace(FITTED, allocator_margin=2 * FITTED.allocator_margin)
    base, wide = memory_breakdown(LLAMA8, settings), memory_breakdown(LLAMA8, settings, wider)
    assert wide.margins[FORWARD_BACKWARD] == pytest.approx(2 * base.margins[FORWARD_BACKWARD])
    assert "allocator margin 24% of short-lived memory" in next(n for n in assumptions(wide) if n.startswith("peak at"))
