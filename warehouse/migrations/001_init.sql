-- gpucat warehouse, first version. Units: GB = 10^9 bytes, USD, seconds; timestamps are UTC.

CREATE TABLE scrape_runs (
    run_id        VARCHAR PRIMARY KEY,
    flow_run_id   VARCHAR,                    -- the Prefect flow run that ran it, when there was one
    source        VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ NOT NULL,
    status        VARCHAR NOT NULL CHECK (status IN ('ok', 'failed', 'skipped')),
    rows_fetched  INTEGER NOT NULL DEFAULT 0,  -- records the parser produced, trusted or not
    rows_valid    INTEGER NOT NULL DEFAULT 0,
    rows_rejected INTEGER NOT NULL DEFAULT 0,
    pages         INTEGER NOT NULL DEFAULT 0,
    error         VARCHAR                      -- why it failed or was skipped; secrets redacted
);

CREATE TABLE rejected_rows (
    run_id      VARCHAR NOT NULL,
    source      VARCHAR NOT NULL,
    provider    VARCHAR NOT NULL,
    table_name  VARCHAR NOT NULL,
    reasons     VARCHAR[] NOT NULL,
    row_json    JSON NOT NULL,
    rejected_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE gpu_models (
    gpu_model             VARCHAR PRIMARY KEY,
    vendor                VARCHAR NOT NULL,
    family                VARCHAR NOT NULL,
    architecture          VARCHAR NOT NULL,
    form_factor           VARCHAR NOT NULL,
    memory_gb             DOUBLE NOT NULL,
    memory_type           VARCHAR NOT NULL,
    memory_bandwidth_gbps DOUBLE,              -- GB/s (gigabytes per second)
    bf16_tflops           DOUBLE,              -- dense, FP32 accumulate; NULL where unsourced
    fp16_tflops           DOUBLE,
    bf16                  BOOLEAN NOT NULL,
    fp8                   BOOLEAN NOT NULL,
    int8                  BOOLEAN NOT NULL,
    int4                  BOOLEAN NOT NULL,
    bnb_4bit              BOOLEAN NOT NULL,    -- bitsandbytes NF4 kernels run on it (QLoRA)
    nvlink_gbps           DOUBLE,              -- GB/s bidirectional scale-up link per GPU
    notes                 VARCHAR,
    source                VARCHAR NOT NULL
);

-- History at the cost of changes only: a row per distinct content of an offer. The current
-- version has valid_to NULL; valid_from/valid_to are scrape times, so as-of queries read
-- "WHERE valid_from <= t AND (valid_to IS NULL OR valid_to > t)".
CREATE TABLE offer_versions (
    provider         VARCHAR NOT NULL,
    offer_id         VARCHAR NOT NULL,
    source           VARCHAR NOT NULL,
    instance_type    VARCHAR NOT NULL,
    region           VARCHAR NOT NULL,
    market           VARCHAR NOT NULL,
    tier             VARCHAR,
    gpu_name         VARCHAR NOT NULL,
    gpu_model        VARCHAR NOT NULL,
    gpu_count        DOUBLE NOT NULL,
    gpu_memory_gb    DOUBLE NOT NULL,
    vcpus            DOUBLE,
    ram_gb           DOUBLE,
    price            DOUBLE NOT NULL,
    price_unit       VARCHAR NOT NULL,
    currency         VARCHAR NOT NULL,
    usd_per_hour     DOUBLE NOT NULL,
    usd_per_gpu_hour DOUBLE NOT NULL,
    availability     VARCHAR NOT NULL,
    available_count  INTEGER,
    interconnect     VARCHAR,
    fabric           VARCHAR,
    fabric_gbps      DOUBLE,
    source_url       VARCHAR NOT NULL,
    scraped_at       TIMESTAMPTZ NOT NULL,     -- last time this content was seen
    content_hash     VARCHAR NOT NULL,
    valid_from       TIMESTAMPTZ NOT NULL,
    valid_to         TIMESTAMPTZ,
    first_run_id     VARCHAR NOT NULL,
    last_run_id      VARCHAR NOT NULL
);

CREATE TABLE interruption_rate_versions (
    provider          VARCHAR NOT NULL,
    region            VARCHAR NOT NULL,
    instance_type     VARCHAR NOT NULL,
    os                VARCHAR NOT NULL,
    source            VARCHAR NOT NULL,
    interruption_band VARCHAR NOT NULL,
    band_lower_pct    DOUBLE NOT NULL,
    band_upper_pct    DOUBLE NOT NULL,
    savings_pct       DOUBLE,
    source_url        VARCHAR NOT NULL,
    scraped_at        TIMESTAMPTZ NOT NULL,
    content_hash      VARCHAR NOT NULL,
    valid_from        TIMESTAMPTZ NOT NULL,
    valid_to          TIMESTAMPTZ,
    first_run_id      VARCHAR NOT NULL,
    last_run_id       VARCHAR NOT NULL
);

CREATE VIEW current_offers AS
SELECT provider, offer_id, instance_type, region, market, tier, gpu_model, gpu_count, gpu_memory_gb,
       vcpus, ram_gb, usd_per_hour, usd_per_gpu_hour, currency, price, price_unit, availability,
       available_count, interconnect, fabric, fabric_gbps, gpu_name, source, source_url, scraped_at,
       valid_from AS price_since
FROM offer_versions
WHERE valid_to IS NULL;

CREATE VIEW interruption_rates AS
SELECT provider, region, instance_type, os, interruption_band, band_lower_pct, band_upper_pct,
       savings_pct, source, source_url, scraped_at
FROM interruption_rate_versions
WHERE valid_to IS NULL;
