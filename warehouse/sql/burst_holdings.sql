-- What sources hold as a burst starts: the versioned tables in which each has current versions,
-- and 'source_gpu_medians' where it has recorded medians (every source's: a filter on the burst's
-- sources cost more than it saved). A load in the burst changes only its own source's rows, so a
-- source that holds none of a table has none when it loads: its merge is a plain insert and its
-- quarantine has no history to read.
SELECT DISTINCT 'offer_versions' AS holding, source FROM offer_versions WHERE valid_to IS NULL
UNION ALL
SELECT DISTINCT 'interruption_rate_versions', source FROM interruption_rate_versions WHERE valid_to IS NULL
UNION ALL
SELECT DISTINCT 'exchange_rate_versions', source FROM exchange_rate_versions WHERE valid_to IS NULL
UNION ALL
SELECT DISTINCT 'scraped_storage_term_versions', source FROM scraped_storage_term_versions WHERE valid_to IS NULL
UNION ALL
SELECT DISTINCT 'scraped_egress_term_versions', source FROM scraped_egress_term_versions WHERE valid_to IS NULL
UNION ALL
SELECT DISTINCT 'source_gpu_medians', source FROM source_gpu_medians
