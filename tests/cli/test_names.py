"""Names as people type them: GPUs in SkyPilot's and dstack's forms, Hugging Face model ids,
choices in any case and other tools' spellings. Each resolves, or is refused with a suggestion."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.gpu_names import GpuChoice, resolve_gpu

runner = CliRunner()


@pytest.mark.parametrize(
    ("typed", "names", "count"),
    [
        # a memory suffix asks for every card of that memory, the form-factor stand-in included
        ("A100-80GB", ("A100-SXM4-80GB", "A100-PCIe-80GB", "A100-80GB-AnyForm"), None),
        ("A100:8", ("A100",), 8),
        ("H100:8", ("H100",), 8),
        ("H100-80GB", ("H100-SXM", "H100-PCIe", "H100-80GB-AnyForm"), None),
        ("RTX4090", ("RTX-4090", "RTX 4090"), None),
        ("4090", ("RTX-4090", "RTX 4090"), None),
        ("L40S", ("L40S",), None),
        ("h100", ("H100",), None),
        ("A100 40GB", ("A100-SXM4-40GB", "A100-PCIe-40GB", "A100-40GB-AnyForm"), None),
    ],
)
def test_gpu_spellings_resolve(typed, names, count):
    assert resolve_gpu(typed) == GpuChoice(typed, names, count)


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("H200-80GB", "unknown GPU model or family 'H200-80GB'; did you mean 'H200'"),
        ("X100", "did you mean 'V100' or 'P100' or 'H100'?"),
        ("H100:x", "the count after ':' must be a whole number of GPUs, e.g. H100:8"),
        ("H100:0", "the count after ':' must be a whole number of GPUs"),
    ],
)
def test_unknown_gpu_spellings_are_refused_with_a_suggestion(typed, message):
    result = runner.invoke(app, ["offers", "--gpu", typed, "--db", "/nonexistent.duckdb"])
    assert result.exit_code != 0 and message in result.stderr


def test_count_after_a_colon_asks_for_that_many_gpus(catalog_db):
    rows = json.loads(runner.invoke(app, ["offers", "--gpu", "H100:8", "--all", "--json", "--db", str(catalog_db)]).stdout)
    assert rows and {r["gpu_count"] for r in rows} == {8} and {r["gpu_model"][:4] for r in rows} == {"H100"}
    families = json.loads(runner.invoke(app, ["offers", "--gpu", "A100-80GB", "--all", "--json", "--db", str(catalog_db)]).stdout)
    assert families and {r["gpu_model"] for r in families} <= {"A100-SXM4-80GB", "A100-PCIe-80GB", "A100-80GB-AnyForm"}


def memory(*args: str) -> dict:
    result = runner.invoke(app, ["memory", *args, "--offline", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("typed", "base"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B"),
        ("meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf"),
        ("google/gemma-2-9b-it", "google/gemma-2-9b"),
    ],
)
def test_hugging_face_variants_resolve_offline_to_their_base_with_a_note(typed, base):
    result = runner.invoke(app, ["memory", "--model", typed, "--method", "qlora", "--offline", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == memory("--model", base, "--method", "qlora")
    assert f"note: {typed} read as {base} (" in result.stderr and "same architecture" in result.stderr


def test_an_unknown_model_gets_a_did_you_mean():
    result = runner.invoke(app, ["memory", "--model", "llama3-8b", "--method", "qlora", "--offline"])
    assert result.exit_code != 0
    assert "model 'llama3-8b' is not in gpucat's table (see `gpucat models`); did you mean 'llama-3-8b'" in result.stderr


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        (["--method", "QLoRA"], ["--method", "qlora"]),
        (["--method", "LORA"], ["--method", "lora"]),
        (["--method", "qlora", "--precision", "bf16"], ["--method", "qlora", "--precision", "bf16-mixed"]),
        (["--method", "qlora", "--precision", "BF16-True"], ["--method", "qlora", "--precision", "bf16-true"]),
        (["--method", "lora", "--precision", "16-mixed"], ["--method", "lora", "--precision", "fp16-mixed"]),
        (["--method", "qlora", "--optimizer", "paged_adamw_8bit"], ["--method", "qlora", "--optimizer", "paged-adamw-8bit"]),
        (["--method", "lora", "--optimizer", "adamw_torch"], ["--method", "lora", "--optimizer", "adamw"]),
        (["--method", "lora", "--optimizer", "adamw_bnb_8bit"], ["--method", "lora", "--optimizer", "adamw-8bit"]),
        (["--method", "lora", "--lora-targets", "ALL_LINEAR"], ["--method", "lora", "--lora-targets", "all-linear"]),
        (["--method", "full", "--gpus", "8", "--sharding", "FSDP"], ["--method", "full", "--gpus", "8", "--sharding", "fsdp"]),
    ],
)
def test_choices_in_any_case_and_other_tools_spellings(typed, canonical):
    assert memory("--model", "llama-3.1-8b", *typed) == memory("--model", "llama-3.1-8b", *canonical)


def test_one_sharding_default_for_memory_fit_and_cost(catalog_db):
    """memory --gpus 8 used to assume no sharding while fit and cost assumed FSDP."""
    eight = memory("--model", "llama-3.1-8b", "--method", "qlora", "--gpus", "8")
    assert eight == memory("--model", "llama-3.1-8b", "--method", "qlora", "--gpus", "8", "--sharding", "fsdp")
    fit = runner.invoke(app, ["fit", "--model", "llama-3.1-8b", "--method", "qlora", "--json", "--db", str(catalog_db)])
    assert json.loads(fit.stdout)["per_gpu_gb"]["8"] == eight["per_gpu_gb"]
    for command in ("memory", "fit", "cost"):
        help_text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).stdout
        assert "[default: fsdp]" in help_text, command
