-- The status of a source's latest recorded run (none when it never ran).
SELECT status FROM scrape_runs WHERE source = $source ORDER BY started_at DESC LIMIT 1
