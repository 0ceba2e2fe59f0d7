-- Quarantine: a batch that parsed and validated but failed the anomaly checks
-- (warehouse/quarantine.py) is kept here for inspection instead of loading as truth. Its run
-- is in scrape_runs with status 'quarantined' and the reasons in `error`; `gpucat accept
-- RUN_ID` loads it deliberately as a new run and records which one.
CREATE TABLE quarantines (
    run_id          VARCHAR PRIMARY KEY,        -- the quarantined run (scrape_runs.run_id)
    source          VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    reasons         VARCHAR[] NOT NULL,         -- every anomaly check that failed, in words
    quarantined_at  TIMESTAMPTZ NOT NULL,
    accepted_at     TIMESTAMPTZ,                -- NULL until `gpucat accept` loads it
    accepted_run_id VARCHAR                     -- the scrape_runs row of that load
);

-- The batch's rows as validation passed them, one JSON object per row (the columns of the
-- table's contract), so `gpucat sql` can inspect them and `accept` can load them unchanged.
CREATE TABLE quarantined_rows (
    run_id     VARCHAR NOT NULL,
    table_name VARCHAR NOT NULL,
    row_json   JSON NOT NULL
);
