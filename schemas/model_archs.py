"""`model_archs`: shapes of the open models the memory estimator knows (gpucat/memory/data/model_archs.csv).

One row per Hugging Face repo. Sizes are element counts; `params` is the total parameter count
(tied embeddings counted once), which the tests re-derive from the shapes.
"""

from __future__ import annotations

import pandera.polars as pa


class ModelArchRow(pa.DataFrameModel):
    name: str = pa.Field(unique=True, str_matches=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
    alias: str = pa.Field(unique=True, str_matches=r"^[a-z0-9][a-z0-9._-]*$")
    family: str
    arch_type: str = pa.Field(isin=["decoder", "encoder-decoder", "encoder"])
    params: int = pa.Field(gt=0)
    n_layers: int = pa.Field(gt=0)
    n_encoder_layers: int = pa.Field(ge=0)
    hidden_size: int = pa.Field(gt=0)
    n_heads: int = pa.Field(gt=0)
    n_kv_heads: int = pa.Field(gt=0)
    head_dim: int = pa.Field(gt=0)
    intermediate_size: int = pa.Field(ge=0)
    vocab_size: int = pa.Field(gt=0)
    tied_embeddings: bool
    n_experts: int = pa.Field(ge=0)
    n_active_experts: int = pa.Field(ge=0)
    moe_intermediate_size: int = pa.Field(ge=0)
    shared_expert_intermediate_size: int = pa.Field(ge=0)
    n_dense_layers: int = pa.Field(ge=0)
    mlp: str = pa.Field(isin=["gated", "plain"])
    norm: str = pa.Field(isin=["rms", "layer"])
    norms_per_layer: int = pa.Field(isin=[1, 2, 4])
    bias: str = pa.Field(isin=["none", "qkv", "all"])
    qk_norm: bool
    position: str = pa.Field(isin=["rope", "alibi", "learned", "relative"])
    max_positions: int = pa.Field(ge=0)
    token_types: int = pa.Field(ge=0)
    embedding_norm: bool
    lm_head_bias: bool
    dropout: float = pa.Field(ge=0, lt=1)
    source: str = pa.Field(str_startswith="https://huggingface.co/")

    @pa.dataframe_check(description="query heads are a multiple of key/value heads")
    def heads_group(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        return data.lazyframe.select((pl.col("n_heads") % pl.col("n_kv_heads") == 0).alias("ok"))

    @pa.dataframe_check(description="MoE rows route to some but not all experts; dense rows have none")
    def experts_consistent(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        moe = pl.col("n_experts") > 0
        ok = pl.when(moe).then(
            (pl.col("n_active_experts") > 0)
            & (pl.col("n_active_experts") < pl.col("n_experts"))
            & (pl.col("moe_intermediate_size") > 0)
        ).otherwise((pl.col("n_active_experts") == 0) & (pl.col("moe_intermediate_size") == 0))
        return data.lazyframe.select(ok.alias("ok"))

    @pa.dataframe_check(description="only encoder-decoder rows have encoder layers")
    def encoder_layers(cls, data: pa.PolarsData):  # type: ignore[no-untyped-def]
        import polars as pl

        enc_dec = pl.col("arch_type") == "encoder-decoder"
        return data.lazyframe.select((enc_dec == (pl.col("n_encoder_layers") > 0)).alias("ok"))

    class Config:
        strict = True
        coerce = True
