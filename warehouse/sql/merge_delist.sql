-- Offers a successful run of their source no longer lists stay in history as unavailable: a
-- copy of the current version marked unavailable (content_hash 'delisted:' + the old hash)
-- becomes current from this batch's time, keeping its last-seen time so it ages and goes stale.
-- It stays current while the offer is absent and is closed when the offer is listed again.
INSERT INTO offer_versions BY NAME
SELECT v.* REPLACE ('unavailable' AS availability, CAST(NULL AS INTEGER) AS available_count,
                    'delisted:' || v.content_hash AS content_hash, CAST($observed_at AS TIMESTAMPTZ) AS valid_from,
                    CAST(NULL AS TIMESTAMPTZ) AS valid_to,
                    CAST($run_id AS VARCHAR) AS first_run_id, CAST($run_id AS VARCHAR) AS last_run_id)
FROM offer_versions AS v
WHERE v.rowid IN (SELECT version_rowid FROM merge_plan WHERE action = 'delist')
