-- Valid, fetched and rejected rows of the source's most recent successful run.
SELECT rows_valid, rows_fetched, rows_rejected
FROM scrape_runs
WHERE source = $source AND status = 'ok'
ORDER BY finished_at DESC
LIMIT 1
