-- Offers a successful run of their source no longer lists stay in history as unavailable: the
-- current version is closed and a copy marked unavailable (content_hash 'delisted:' + the old
-- hash) becomes current, keeping its last-seen time so it ages and goes stale. It stays current,
-- unchanged, while the offer is absent (merge_versions leaves it open) and is closed when the
-- offer is listed again. An offer whose row was rejected this run (`kept`) is still listed, so it
-- keeps its last good version instead. Runs before merge_versions, inside the source's transaction.

INSERT INTO offer_versions BY NAME
SELECT v.* REPLACE ('unavailable' AS availability, CAST(NULL AS INTEGER) AS available_count,
                    'delisted:' || v.content_hash AS content_hash, CAST($observed_at AS TIMESTAMPTZ) AS valid_from,
                    CAST($run_id AS VARCHAR) AS first_run_id, CAST($run_id AS VARCHAR) AS last_run_id)
FROM offer_versions AS v
WHERE v.source = $source
  AND v.valid_to IS NULL
  AND v.content_hash NOT LIKE 'delisted:%'
  AND NOT EXISTS (SELECT 1 FROM staged AS s WHERE {key_match})
  AND NOT EXISTS (SELECT 1 FROM kept AS s WHERE {key_match});  -- rejected this run: not delisted

UPDATE offer_versions AS v
SET valid_to = $observed_at
WHERE v.source = $source
  AND v.valid_to IS NULL
  AND v.content_hash NOT LIKE 'delisted:%'
  AND NOT EXISTS (SELECT 1 FROM staged AS s WHERE {key_match})
  AND NOT EXISTS (SELECT 1 FROM kept AS s WHERE {key_match});  -- rejected this run: not delisted
