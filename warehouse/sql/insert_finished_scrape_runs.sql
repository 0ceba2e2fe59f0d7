-- The outcomes of a burst's runs that started no `running` row (after finish_scrape_runs.sql).
INSERT INTO scrape_runs (run_id, flow_run_id, source, provider, started_at, finished_at, status,
                         rows_fetched, rows_valid, rows_rejected, rows_skipped, pages, error,
                         capture, captured_at)
SELECT run_id, flow_run_id, source, provider, started_at, finished_at, status,
       rows_fetched, rows_valid, rows_rejected, rows_skipped, pages, error, capture, captured_at
FROM outcomes_frame AS o
WHERE NOT EXISTS (SELECT 1 FROM scrape_runs AS r WHERE r.run_id = o.run_id)
