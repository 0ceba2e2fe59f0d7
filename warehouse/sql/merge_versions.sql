-- Merge one source's validated batch (registered as `staged`) into a versioned table.
-- Placeholders in braces are identifiers from the table contract in code, never user input;
-- values are DuckDB parameters. Statements run in order inside the source's transaction.
-- The INSERT stays last: a source without current versions runs only it (warehouse/load.py).

-- 1. Close the current versions of this source that changed or disappeared. A row the source
--    still lists but that failed validation this run (registered as `kept`: its key only) has
--    not disappeared: its last good version stays current.
UPDATE {versions} AS v
SET valid_to = $observed_at
WHERE v.source = $source
  AND v.valid_to IS NULL
  AND NOT EXISTS (SELECT 1 FROM staged AS s WHERE {key_match} AND s.content_hash = v.content_hash)
  AND NOT (v.content_hash LIKE 'delisted:%' AND NOT EXISTS (SELECT 1 FROM staged AS s WHERE {key_match}))
  AND NOT EXISTS (SELECT 1 FROM kept AS s WHERE {key_match});

-- 2. Unchanged versions: only the last-seen time, URL and run move on.
UPDATE {versions} AS v
SET scraped_at = s.scraped_at, source_url = s.source_url, last_run_id = $run_id
FROM staged AS s
WHERE v.valid_to IS NULL AND {key_match} AND s.content_hash = v.content_hash;

-- 3. New content becomes the current version.
INSERT INTO {versions} ({columns}, content_hash, valid_from, valid_to, first_run_id, last_run_id)
SELECT {staged_columns}, s.content_hash, s.scraped_at, NULL, $run_id, $run_id
FROM staged AS s
WHERE NOT EXISTS (
    SELECT 1 FROM {versions} AS v WHERE v.valid_to IS NULL AND {key_match} AND v.content_hash = s.content_hash
);
