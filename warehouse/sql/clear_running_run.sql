DELETE FROM scrape_runs WHERE run_id = $run_id AND status = 'running'
