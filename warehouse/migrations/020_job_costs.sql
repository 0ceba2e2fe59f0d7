-- What `gpucat cost` answered: one row per configuration of each run, ranked by total job cost,
-- so SQL users read the same numbers (latest_job_costs is the newest run). USD, hours, GB.
CREATE TABLE job_costs (
    run_at                 TIMESTAMPTZ NOT NULL,
    model                  VARCHAR NOT NULL,
    method                 VARCHAR NOT NULL,
    training_tokens        DOUBLE NOT NULL,   -- tokens per epoch x epochs
    rank                   INTEGER NOT NULL,  -- 1 = cheapest job
    provider               VARCHAR NOT NULL,
    offer_id               VARCHAR NOT NULL,
    instance_type          VARCHAR NOT NULL,
    region                 VARCHAR NOT NULL,
    gpu_model              VARCHAR NOT NULL,
    gpus                   INTEGER NOT NULL,
    nodes                  INTEGER NOT NULL,
    market                 VARCHAR NOT NULL,
    usd_per_hour           DOUBLE NOT NULL,   -- the whole configuration
    tokens_per_s           DOUBLE NOT NULL,   -- estimated throughput of the configuration
    hours                  DOUBLE NOT NULL,   -- run time, spot losses and checkpoint writes included
    compute_usd            DOUBLE NOT NULL,
    storage_usd            DOUBLE,            -- NULL: the provider publishes no price for it
    egress_usd             DOUBLE,            -- NULL: no published price for this volume
    spot_overhead_usd      DOUBLE NOT NULL,
    total_usd              DOUBLE NOT NULL,   -- compute + storage + egress + spot overhead (the known parts)
    availability           VARCHAR NOT NULL,
    interruption_basis     VARCHAR,           -- spot rows: where the interruption rate comes from
    expected_interruptions DOUBLE,
    unknown                VARCHAR[] NOT NULL, -- terms not published, left out of total_usd
    options                JSON NOT NULL      -- the training and job options of the run
);

CREATE VIEW latest_job_costs AS
SELECT *
FROM job_costs
WHERE run_at = (SELECT max(run_at) FROM job_costs);
