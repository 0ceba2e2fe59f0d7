-- One `running` row per run of a refresh that starts (registered as `started_frame`), in one statement.
INSERT INTO scrape_runs (run_id, flow_run_id, source, provider, started_at, finished_at, status, runner)
SELECT run_id, flow_run_id, source, provider, started_at, started_at, 'running', runner
FROM started_frame
