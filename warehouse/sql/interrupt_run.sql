UPDATE scrape_runs
SET status = 'interrupted', finished_at = $now,
    error = 'the refresh that ran it stopped before recording an outcome (killed, or its machine went down)'
WHERE run_id = $run_id AND status = 'running'
