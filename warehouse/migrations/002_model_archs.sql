-- Architectures of open models the memory estimator knows (reference data:
-- gpucat/memory/data/model_archs.csv, validated by schemas/model_archs.py, reloaded on refresh).
-- Sizes are element counts; `params` counts tied embeddings once.
CREATE TABLE model_archs (
    name                            VARCHAR PRIMARY KEY,  -- Hugging Face repo id
    alias                           VARCHAR NOT NULL,
    family                          VARCHAR NOT NULL,
    arch_type                       VARCHAR NOT NULL,     -- decoder | encoder-decoder | encoder
    params                          BIGINT NOT NULL,
    n_layers                        INTEGER NOT NULL,     -- decoder layers
    n_encoder_layers                INTEGER NOT NULL,
    hidden_size                     INTEGER NOT NULL,
    n_heads                         INTEGER NOT NULL,
    n_kv_heads                      INTEGER NOT NULL,
    head_dim                        INTEGER NOT NULL,
    intermediate_size               INTEGER NOT NULL,
    vocab_size                      INTEGER NOT NULL,
    tied_embeddings                 BOOLEAN NOT NULL,
    n_experts                       INTEGER NOT NULL,
    n_active_experts                INTEGER NOT NULL,
    moe_intermediate_size           INTEGER NOT NULL,
    shared_expert_intermediate_size INTEGER NOT NULL,
    n_dense_layers                  INTEGER NOT NULL,
    mlp                             VARCHAR NOT NULL,     -- gated | plain
    norm                            VARCHAR NOT NULL,     -- rms | layer
    norms_per_layer                 INTEGER NOT NULL,
    bias                            VARCHAR NOT NULL,     -- none | qkv | all
    qk_norm                         BOOLEAN NOT NULL,
    position                        VARCHAR NOT NULL,
    max_positions                   INTEGER NOT NULL,
    token_types                     INTEGER NOT NULL,
    embedding_norm                  BOOLEAN NOT NULL,
    lm_head_bias                    BOOLEAN NOT NULL,
    dropout                         DOUBLE NOT NULL,
    source                          VARCHAR NOT NULL
);
