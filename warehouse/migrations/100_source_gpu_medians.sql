-- Each source's median price per GPU-hour of every GPU model it lists, as of each load of its
-- offers (its current offers after the load, delisted ones aside). The quarantine's drift check
-- (warehouse/quarantine.py, source_median_range.sql) reads its window here instead of
-- re-deriving every past median from offer_versions, which grew with all history (issue 26).
CREATE TABLE source_gpu_medians (
    source                  VARCHAR NOT NULL,
    gpu_model               VARCHAR NOT NULL,
    as_of                   TIMESTAMPTZ NOT NULL,  -- the load's batch time (its newest scraped_at)
    median_usd_per_gpu_hour DOUBLE NOT NULL
);

-- The medians history already holds: one row per model at every moment a version of the source began.
INSERT INTO source_gpu_medians
WITH moments AS (SELECT DISTINCT source, valid_from AS as_of FROM offer_versions)
SELECT m.source, v.gpu_model, m.as_of, median(v.usd_per_gpu_hour)
FROM moments AS m
JOIN offer_versions AS v
  ON v.source = m.source AND v.valid_from <= m.as_of AND (v.valid_to IS NULL OR v.valid_to > m.as_of)
WHERE v.content_hash NOT LIKE 'delisted:%'
GROUP BY m.source, v.gpu_model, m.as_of;
