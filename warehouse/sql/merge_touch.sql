-- Unchanged versions: only the last-seen time, URL and run move on. {versions}, {key_match}: from code.
UPDATE {versions} AS v
SET scraped_at = s.scraped_at, source_url = s.source_url, last_run_id = $run_id
FROM merge_plan AS p, staged AS s
WHERE p.action = 'seen' AND v.rowid = p.version_rowid AND {key_match} AND s.content_hash = v.content_hash
