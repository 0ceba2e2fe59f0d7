"""`gpucat memory` and `gpucat models`: output shapes and one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.memory.estimator import FITTED

runner = CliRunner()
CONFIGS = Path(__file__).parent / "data" / "configs"
LLAMA_CONFIG = str(CONFIGS / "llama-3.2-3b.json")


def run_json(*args: str) -> dict:
    result = runner.invoke(app, ["memory", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def one_error_line(result) -> str:
    assert result.exit_code != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output
    return lines[0]


def test_json_shape():
    out = run_json("--model", "llama-3.1-8b", "--method", "qlora", "--batch", "2", "--seq-len", "4096")
    assert set(out) >= {"model", "settings", "total_params", "trainable_params", "per_gpu_gb", "breakdown",
                        "peak_phase", "phases_gb", "host_gb", "host_breakdown", "requires", "assumptions"}
    assert isinstance(out["per_gpu_gb"], float)
    assert all(isinstance(v, float) for v in out["breakdown"].values())
    assert sum(out["breakdown"].values()) == pytest.approx(out["per_gpu_gb"], abs=0.01)
    assert out["requires"] == {"bf16": True, "nf4": True, "int8": False}
    assert out["settings"]["lora_targets"] == ["q", "k", "v", "o", "gate", "up", "down"]


def test_every_contract_flag_is_accepted():
    out = run_json(
        "--config", LLAMA_CONFIG, "--method", "lora", "--precision", "bf16-mixed", "--optimizer", "adamw-8bit",
        "--lora-rank", "32", "--lora-targets", "attn", "--batch", "4", "--seq-len", "1024",
        "--no-grad-checkpointing", "--attention", "eager", "--gpus", "2", "--sharding", "zero2",
        "--offload", "optimizer",
    )
    assert {k: out["settings"][k] for k in ("precision", "optimizer", "lora_rank", "gpus", "sharding", "offload")} == {
        "precision": "bf16-mixed", "optimizer": "adamw-8bit", "lora_rank": 32, "gpus": 2, "sharding": "zero2",
        "offload": "optimizer",
    }
    assert out["settings"]["grad_checkpointing"] is False
    assert out["host_gb"] > 0


def test_llama_style_config_with_qlora_is_sane():
    out = run_json("--config", LLAMA_CONFIG, "--method", "qlora", "--batch", "4", "--seq-len", "2048", "--peft-upcast", "off")
    b = out["breakdown"]
    assert out["total_params"] == 3_212_749_824
    assert 1.6 < b["weights_frozen"] < 2.8  # 2.8B NF4 linears + 0.39B bf16 embedding
    assert {"cuda_context", "weights_frozen", "weights_trainable", "optimizer_states", "activations",
            "logits_loss", "dequant_buffer", "allocator_margin"} == set(b)
    # with the standard loss, 8192 tokens x 128256 logits x 14 bytes dominate a 3B QLoRA run
    k = FITTED.activation_overhead  # the fitted factor on every activation term
    assert b["logits_loss"] == pytest.approx(k * 14 * 8192 * 128256 / 1e9, abs=1e-3)
    assert out["per_gpu_gb"] < 25


@pytest.mark.parametrize("config", ["t5-base.json", "flan-t5-base.json", "mt5-small.json"])
def test_t5_config_is_sane(config):
    out = run_json("--config", str(CONFIGS / config), "--method", "full", "--precision", "bf16-mixed",
                   "--batch", "8", "--seq-len", "512", "--target-len", "128")
    b = out["breakdown"]
    params = out["total_params"]
    assert b["master_weights"] == pytest.approx(4 * params / 1e9, abs=1e-3)
    assert out["per_gpu_gb"] > 18 * params / 1e9
    assert any("decoder sequences 128" in note for note in out["assumptions"])


def test_table_output():
    result = runner.invoke(app, ["memory", "-m", "Mistral-7B-v0.1", "--method", "lora", "--lora-targets", "qv"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("mistral-7b-v0.1 (mistralai/Mistral-7B-v0.1): 7.24B parameters")
    for piece in ("weights_frozen", "per GPU", "GB = 10^9 bytes.", "Assumptions:", "LoRA r16 on qv"):
        assert piece in text


def test_offloaded_state_shows_host_ram():
    result = runner.invoke(app, ["memory", "-m", "llama-3.1-70b", "--method", "full", "--precision", "bf16-mixed",
                                 "--gpus", "8", "--sharding", "zero3", "--offload", "params"])
    assert result.exit_code == 0, result.output
    assert "host RAM" in result.stdout


def test_a_cached_hub_config_works_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUCAT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "hf-configs").mkdir()
    shutil.copy(CONFIGS / "mistral-7b-v0.1.json", tmp_path / "hf-configs" / "acme--my-mistral.json")
    out = run_json("--model", "acme/my-mistral", "--method", "lora")
    assert (out["model"], out["total_params"]) == ("acme/my-mistral", 7_241_732_096)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "llama-3.1-8b", "--method", "prefix"], "--method must be one of full, lora, qlora"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--precision", "bf8"], "--precision must be one of"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--optimizer", "lion"], "--optimizer must be one of"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--sharding", "zero4"], "--sharding must be one of"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--attention", "sdpa"], "--attention must be one of"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--lora-targets", "mlp"], "--lora-targets must be one of"),
        (["--model", "llama-3.1-8b"], "--method is required"),
        (["--method", "lora"], "give exactly one of --model NAME and --config"),
        (["--model", "llama-3.1-8b", "--config", LLAMA_CONFIG, "--method", "lora"], "give exactly one of"),
        (["--config", "/nonexistent/config.json", "--method", "lora"], "config file not found: /nonexistent/config.json"),
        (["--model", "no-such-model", "--method", "lora"], "model 'no-such-model' is not in gpucat's table"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--batch", "0"], "--batch must be a positive integer, got 0"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--batch", "-2"], "--batch must be a positive integer, got -2"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--seq-len", "0"], "--seq-len must be a positive integer"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--seq-len", "-1"], "--seq-len must be a positive integer"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--gpus", "0"], "--gpus must be a positive integer"),
        (["--model", "llama-3.1-8b", "--method", "full", "--lora-rank", "8"], "--lora-rank applies to --method lora or qlora"),
        (["--model", "llama-3.1-8b", "--method", "full", "--lora-targets", "qv"], "--lora-targets applies to"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--quant", "nf4"], "--quant applies to --method qlora"),
        (["--model", "llama-3.1-8b", "--method", "qlora", "--quant", "fp4"], "--quant must be one of nf4, nf4-dq, int8"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--lora-rank", "0"], "--lora-rank must be a positive integer"),
        (["--model", "llama-3.1-8b", "--method", "lora", "--target-len", "64"], "--target-len applies only to"),
        (["--model", "llama-3.1-8b", "--method", "full", "--offload", "params", "--sharding", "zero2", "--gpus", "4"],
         "--offload params needs --sharding zero3 or fsdp"),
        (["--model", "acme/x", "--method", "lora", "--offline"], "model 'acme/x' is not in gpucat's table"),
    ],
)
def test_bad_input_is_one_error_line(args, message):
    assert message in one_error_line(runner.invoke(app, ["memory", *args]))


def test_config_with_missing_fields_is_one_error_line(tmp_path):
    cfg = json.loads((CONFIGS / "llama-3.2-3b.json").read_text())
    del cfg["num_attention_heads"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    result = runner.invoke(app, ["memory", "--config", str(tmp_path / "config.json"), "--method", "lora"])
    assert "lacks required field(s): num_attention_heads" in one_error_line(result)


def test_offline_org_name_without_cache_is_one_error_line(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUCAT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GPUCAT_OFFLINE", "1")
    result = runner.invoke(app, ["memory", "--model", "acme/unknown", "--method", "lora"])
    assert "Hub is off (offline mode); pass --config path/to/config.json" in one_error_line(result)


def test_models_json_lists_the_table():
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) >= 40
    assert {"name", "alias", "params", "n_layers", "hidden_size", "n_heads", "n_kv_heads", "head_dim",
            "intermediate_size", "vocab_size", "tied_embeddings", "n_experts", "n_active_experts",
            "arch_type", "source"} <= set(rows[0])


def test_models_filter_and_table():
    rows = json.loads(runner.invoke(app, ["models", "T5", "--json"]).stdout)
    assert {r["family"] for r in rows} == {"t5", "mt5"}
    result = runner.invoke(app, ["models", "mixtral"])
    assert result.exit_code == 0
    assert "mixtral-8x22b" in result.stdout and "2 of 8" in result.stdout


@pytest.mark.parametrize("command", ["memory", "models"])
def test_help(command):
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.stdout


def test_memory_json_gives_a_range_and_the_not_modelled_classes():
    out = run_json("--model", "llama-3.1-8b", "--method", "lora", "--gpus", "8", "--sharding", "zero3",
                   "--offload", "params")
    assert out["per_gpu_gb_low"] <= out["per_gpu_gb_high"]
    assert out["error_band"]["class"] in ("lora/params", "lora", "all")
    assert [line.split(":")[0] for line in out["not_modelled"]] == [
        "checkpoint loading", "DeepSpeed ZeRO-3 parameter offload",
    ]


def test_memory_text_prints_the_range_and_the_not_modelled_warnings():
    result = runner.invoke(app, ["memory", "--model", "llama-3.1-8b", "--method", "full", "--gpus", "8",
                                 "--sharding", "fsdp"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(line.strip().startswith("likely range") and "held-out error" in line for line in lines)
    warnings = lines[lines.index("Not modelled (warning):") + 1:]
    assert [w.split(":")[0] for w in warnings] == ["  - checkpoint loading"]


def test_every_setting_a_library_error_names_has_a_flag_of_the_training_commands():
    """The library names settings in words (gpucat.memory.settings.WORDS); the command line maps
    each to a flag (gpucat.cli._common.FLAGS) that `memory`, `fit` or `cost` really takes."""
    import typer.main

    from gpucat.cli._common import FLAGS
    from gpucat.memory.settings import WORDS

    assert set(FLAGS) == set(WORDS)
    group = typer.main.get_command(app)
    taken = {opt for name in ("memory", "fit", "cost") for p in group.commands[name].params for opt in p.opts}
    assert set(FLAGS.values()) <= taken


def test_a_setting_error_keeps_its_values_out_of_the_template_and_survives_pickling():
    import pickle

    from gpucat.cli._common import error_line
    from gpucat.memory.settings import quantity
    from gpucat.schemas.errors import SettingError

    err = SettingError("{q} must be one of {allowed}, got {value!r}", q=quantity("seq_len"), allowed="a, b", value="{x}")
    assert str(err) == "sequence length must be one of a, b, got '{x}'"
    assert error_line(err) == "--seq-len must be one of a, b, got '{x}'"
    assert err.keys == ["seq_len"]
    copy = pickle.loads(pickle.dumps(err))
    assert (type(copy), str(copy), error_line(copy)) == (SettingError, str(err), error_line(err))
