-- New content becomes the current version: every staged row the plan did not find current.
-- {versions}, {columns}, {staged_columns}, {key_match}: identifiers from code.
INSERT INTO {versions} ({columns}, content_hash, valid_from, valid_to, first_run_id, last_run_id)
SELECT {staged_columns}, s.content_hash, s.scraped_at, NULL, $run_id, $run_id
FROM staged AS s
WHERE NOT EXISTS (SELECT 1 FROM merge_plan AS v WHERE v.action = 'seen' AND {key_match} AND v.content_hash = s.content_hash)
