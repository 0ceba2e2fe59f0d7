INSERT INTO scrape_runs (run_id, flow_run_id, source, provider, started_at, finished_at, status, runner)
VALUES ($run_id, $flow_run_id, $source, $provider, $started_at, $started_at, 'running', $runner)
