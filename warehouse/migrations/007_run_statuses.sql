-- Two more outcomes of a source's run: `unchanged` (a conditional fetch found nothing new, so
-- nothing was parsed and the data stays current) and `quarantined` (the batch parsed and
-- validated but failed the anomaly checks; it is kept for inspection, not loaded as truth).
-- DuckDB cannot alter a CHECK constraint, so the table is rebuilt with every row kept.
ALTER TABLE scrape_runs ADD COLUMN IF NOT EXISTS rows_skipped INTEGER DEFAULT 0;

CREATE TABLE scrape_runs_v7 (
    run_id        VARCHAR PRIMARY KEY,
    flow_run_id   VARCHAR,
    source        VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ NOT NULL,
    status        VARCHAR NOT NULL CHECK (status IN ('ok', 'failed', 'skipped', 'unchanged', 'quarantined')),
    rows_fetched  INTEGER NOT NULL DEFAULT 0,
    rows_valid    INTEGER NOT NULL DEFAULT 0,
    rows_rejected INTEGER NOT NULL DEFAULT 0,
    pages         INTEGER NOT NULL DEFAULT 0,
    error         VARCHAR,
    rows_skipped  INTEGER NOT NULL DEFAULT 0
);

INSERT INTO scrape_runs_v7 BY NAME SELECT * FROM scrape_runs;

DROP TABLE scrape_runs;

ALTER TABLE scrape_runs_v7 RENAME TO scrape_runs;
