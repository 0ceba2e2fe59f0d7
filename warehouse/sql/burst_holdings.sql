-- What each of a burst's sources ($sources) holds as the burst starts: the versioned tables in
-- which it has current versions, and 'source_gpu_medians' when it has recorded medians. A load
-- in the burst changes only its own source's rows, so a source that holds none of a table has
-- none when it loads: its merge is a plain insert and its quarantine has no history to read.
SELECT DISTINCT 'offer_versions' AS holding, source FROM offer_versions WHERE valid_to IS NULL AND list_contains(CAST($sources AS VARCHAR[]), source)
UNION ALL
SELECT DISTINCT 'interruption_rate_versions', source FROM interruption_rate_versions WHERE valid_to IS NULL AND list_contains(CAST($sources AS VARCHAR[]), source)
UNION ALL
SELECT DISTINCT 'exchange_rate_versions', source FROM exchange_rate_versions WHERE valid_to IS NULL AND list_contains(CAST($sources AS VARCHAR[]), source)
UNION ALL
SELECT DISTINCT 'scraped_storage_term_versions', source FROM scraped_storage_term_versions WHERE valid_to IS NULL AND list_contains(CAST($sources AS VARCHAR[]), source)
UNION ALL
SELECT DISTINCT 'scraped_egress_term_versions', source FROM scraped_egress_term_versions WHERE valid_to IS NULL AND list_contains(CAST($sources AS VARCHAR[]), source)
UNION ALL
SELECT DISTINCT 'source_gpu_medians', source FROM source_gpu_medians WHERE list_contains(CAST($sources AS VARCHAR[]), source)
