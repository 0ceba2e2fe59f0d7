-- The outcomes of a burst's runs replace their `running` rows (registered as `outcomes_frame`;
-- finish_scrape_run.sql for one run). Runs that never started a row: insert_finished_scrape_runs.sql.
UPDATE scrape_runs AS r
SET flow_run_id = o.flow_run_id, source = o.source, provider = o.provider, started_at = o.started_at,
    finished_at = o.finished_at, status = o.status, rows_fetched = o.rows_fetched, rows_valid = o.rows_valid,
    rows_rejected = o.rows_rejected, rows_skipped = o.rows_skipped, pages = o.pages, error = o.error,
    capture = o.capture, captured_at = o.captured_at, runner = NULL
FROM outcomes_frame AS o
WHERE r.run_id = o.run_id AND r.status = 'running'
