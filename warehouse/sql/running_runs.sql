SELECT run_id, runner, started_at FROM scrape_runs WHERE status = 'running'
