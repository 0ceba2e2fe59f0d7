"""The model table: schema, parameter counts, LoRA counts, lookup."""

from __future__ import annotations

from dataclasses import asdict, replace

import polars as pl
import pytest

from gpucat.cli._common import error_line
from gpucat.memory.archs import (
    CSV_COLUMNS,
    find_model_arch,
    get_model_arch,
    load_model_archs,
    lora_trainable_params,
    param_counts,
)
from gpucat.schemas.errors import UnknownModel
from gpucat.schemas.model_archs import ModelArchRow
from tests.conftest import ROOT

CSV = ROOT / "gpucat" / "memory" / "data" / "model_archs.csv"
ARCHS = load_model_archs()


def test_table_is_schema_valid_and_broad():
    frame = ModelArchRow.validate(pl.read_csv(CSV, infer_schema_length=None))
    assert frame.height == len(ARCHS) >= 40
    assert tuple(frame.columns) == CSV_COLUMNS
    families = set(frame["family"])
    assert {"llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi", "phi3",
            "falcon", "deepseek", "stablelm", "gpt_neox", "bloom", "t5", "mt5"} <= families
    assert {"decoder", "encoder-decoder"} <= set(frame["arch_type"])


def test_schema_rejects_a_bad_row():
    frame = pl.read_csv(CSV, infer_schema_length=None)
    bad = frame.with_columns(
        pl.when(pl.col("alias") == "llama-3.1-8b").then(pl.lit(7)).otherwise(pl.col("n_kv_heads")).alias("n_kv_heads")
    )
    with pytest.raises(Exception, match="heads_group"):
        ModelArchRow.validate(bad, lazy=True)


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.alias)
def test_params_column_equals_the_count_derived_from_shapes(arch):
    assert param_counts(arch).total == arch.params


# Totals from the models' cards or safetensors metadata, independent of our derivation.
PUBLISHED = {
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400,
    "llama-3.2-3b": 3_212_749_824,
    "mistral-7b-v0.1": 7_241_732_096,
    "mistral-7b-v0.3": 7_248_023_552,
    "mixtral-8x7b": 46_702_792_704,
    "tinyllama-1.1b": 1_100_048_384,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-7b": 7_615_616_512,
    "qwen2.5-72b": 72_706_203_648,
    "qwen3-8b": 8_190_735_360,
    "qwen3-30b-a3b": 30_532_122_624,
    "gemma-2b": 2_506_172_416,
    "gemma-7b": 8_537_680_896,
    "gemma-2-9b": 9_241_705_984,
    "gemma-2-27b": 27_227_128_320,
    "phi-1.5": 1_418_270_720,
    "phi-2": 2_779_683_840,
    "phi-3-mini": 3_821_079_552,
    "falcon-7b": 6_921_720_704,
    "bloom-560m": 559_214_592,
    "bloom-7b1": 7_069_016_064,
    "stablelm-3b-4e1t": 2_795_443_200,
    "t5-base": 222_903_552,
    "t5-3b": 2_851_598_336,
    "flan-t5-xl": 2_849_757_184,
    "mt5-base": 582_401_280,
    "bert-large-uncased": 335_141_888,
}


@pytest.mark.parametrize(("alias", "published"), PUBLISHED.items())
def test_derived_counts_match_published_counts(alias, published):
    assert param_counts(get_model_arch(alias)).total == published


@pytest.mark.parametrize(
    ("alias", "rank", "targets", "expected", "source"),
    [
        ("llama-3.2-3b", 32, "qv", 9_175_040, "PEFT MetaMathQA lora r32"),
        ("llama-3.2-3b", 10, ("gate", "up", "down"), 9_461_760, "PEFT MetaMathQA lora r10 MLP"),
        ("llama-2-7b", 8, "qv", 4_194_304, "LitGPT resource table"),
        ("llama-2-13b", 8, "qv", 6_553_600, "LitGPT resource table"),
        ("phi-1.5", 8, "qv", 1_572_864, "LitGPT resource table"),
        ("stablelm-alpha-3b", 8, "qv", 2_097_152, "LitGPT resource table"),
        ("falcon-40b", 8, "qv", 12_042_240, "LitGPT resource table"),
    ],
)
def test_lora_trainable_params_match_measured_runs(alias, rank, targets, expected, source):
    assert lora_trainable_params(get_model_arch(alias), rank, targets) == expected, source


def test_lora_presets_cover_more_modules_in_order():
    arch = get_model_arch("llama-3.1-8b")
    counts = [lora_trainable_params(arch, 16, t) for t in ("qv", "attn", "all-linear")]
    assert counts == sorted(counts) and len(set(counts)) == 3


def test_all_linear_on_a_plain_mlp_model_has_no_gate():
    t5 = get_model_arch("t5-base")
    # q, k, v, o in 12 encoder self-attention + 2 x 12 decoder attention blocks, up/down in 24 MLPs
    per_attention = 4 * 8 * (768 + 768)
    per_mlp = 8 * (768 + 3072) * 2
    assert lora_trainable_params(t5, 8, "all-linear") == 36 * per_attention + 24 * per_mlp


@pytest.mark.parametrize("name", ["meta-llama/Llama-3.1-70B", "LLAMA-3.1-70B", "llama-3.1-70b", " Llama-3.1-70b "])
def test_lookup_is_case_insensitive_on_repo_id_and_alias(name):
    assert get_model_arch(name).name == "meta-llama/Llama-3.1-70B"


def test_unknown_model_says_how_to_describe_it():
    assert find_model_arch("no-such-model") is None
    with pytest.raises(UnknownModel, match=r"; pass config path/to/config\.json$") as err:
        get_model_arch("no-such-model")
    assert error_line(err.value).endswith("; pass --config path/to/config.json")  # the CLI names its flag


def test_a_model_name_with_braces_is_text_not_a_template():
    with pytest.raises(UnknownModel) as err:
        get_model_arch("{config}{0}")
    assert str(err.value).startswith("model '{config}{0}' is not in gpucat's model table")


def test_aliases_and_repo_ids_are_unique_across_each_other():
    keys = [a.name.lower() for a in ARCHS] + [a.alias for a in ARCHS]
    assert len(keys) == len(set(keys))


def test_quantizable_linears_exclude_embeddings_and_head():
    counts = param_counts(get_model_arch("llama-2-7b"))
    assert asdict(replace(counts, matrices=())) == {
        "total": 6_738_415_616,
        "block_linear": 6_476_005_376,  # the reference's 6.476B of quantizable linear weights
        "embedding": 131_072_000,
        "lm_head": 131_072_000,
        "other": 266_240,  # 65 RMSNorm weight vectors of 4096
        "largest_linear": 4096 * 11008,
        "largest_layer": 202_383_360,
        "matrices": (),
    }
