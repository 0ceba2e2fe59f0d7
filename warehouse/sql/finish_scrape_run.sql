-- A run's outcome replaces its `running` row (one statement; a run that never started one is
-- inserted instead: insert_scrape_run.sql). The runner column only marks running rows.
UPDATE scrape_runs
SET flow_run_id = $flow_run_id, source = $source, provider = $provider, started_at = $started_at,
    finished_at = $finished_at, status = $status, rows_fetched = $rows_fetched, rows_valid = $rows_valid,
    rows_rejected = $rows_rejected, rows_skipped = $rows_skipped, pages = $pages, error = $error,
    capture = $capture, captured_at = $captured_at, runner = NULL
WHERE run_id = $run_id AND status = 'running'
