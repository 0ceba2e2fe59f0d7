INSERT INTO scrape_runs (run_id, flow_run_id, source, provider, started_at, finished_at, status,
                         rows_fetched, rows_valid, rows_rejected, rows_skipped, pages, error,
                         capture, captured_at)
VALUES ($run_id, $flow_run_id, $source, $provider, $started_at, $finished_at, $status,
        $rows_fetched, $rows_valid, $rows_rejected, $rows_skipped, $pages, $error,
        $capture, $captured_at)
