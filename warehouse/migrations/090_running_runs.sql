-- A run records itself when it starts (`running`, with the process that runs it in `runner`),
-- so a refresh killed mid-way leaves a trace; the next refresh marks a run whose process is gone
-- `interrupted`. DuckDB cannot alter a CHECK constraint, so the table is rebuilt with every row kept.
CREATE TABLE scrape_runs_v90 (
    run_id        VARCHAR PRIMARY KEY,
    flow_run_id   VARCHAR,
    source        VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ NOT NULL,
    status        VARCHAR NOT NULL CHECK (status IN ('ok', 'failed', 'skipped', 'unchanged', 'quarantined', 'running', 'interrupted')),
    rows_fetched  INTEGER NOT NULL DEFAULT 0,
    rows_valid    INTEGER NOT NULL DEFAULT 0,
    rows_rejected INTEGER NOT NULL DEFAULT 0,
    pages         INTEGER NOT NULL DEFAULT 0,
    error         VARCHAR,
    rows_skipped  INTEGER NOT NULL DEFAULT 0,
    capture       VARCHAR,      -- migration 080: the capture a replayed run read
    captured_at   TIMESTAMPTZ,  -- migration 080: that capture's time
    runner        VARCHAR
);

INSERT INTO scrape_runs_v90 BY NAME SELECT * FROM scrape_runs;

DROP TABLE scrape_runs;

ALTER TABLE scrape_runs_v90 RENAME TO scrape_runs;
