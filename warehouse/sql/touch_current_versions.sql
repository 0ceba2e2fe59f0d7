-- An unchanged source: its current rows were seen again now (as a full load of the same content
-- would record), so their freshness counts this run. {versions} is a table name from code.
UPDATE {versions}
SET scraped_at = $checked_at, last_run_id = $run_id
WHERE source = $source AND valid_to IS NULL
