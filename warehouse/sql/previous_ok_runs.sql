-- Valid, fetched and rejected rows of the most recent successful run of each of $sources (a
-- burst's sources, read once when it starts: previous_ok_run.sql for one).
SELECT source, rows_valid, rows_fetched, rows_rejected
FROM scrape_runs
WHERE status = 'ok' AND list_contains(CAST($sources AS VARCHAR[]), source)
QUALIFY row_number() OVER (PARTITION BY source ORDER BY finished_at DESC) = 1
