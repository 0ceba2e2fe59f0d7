-- The medians of each source a burst loaded offers of, as of its load (registered as
-- `medians_frame`: source, observed_at), at the burst's end: record_gpu_medians.sql for each.
INSERT INTO source_gpu_medians
SELECT v.source, v.gpu_model, m.observed_at, median(v.usd_per_gpu_hour)
FROM offer_versions AS v
JOIN medians_frame AS m ON m.source = v.source
WHERE v.valid_to IS NULL AND v.content_hash NOT LIKE 'delisted:%'
GROUP BY v.source, v.gpu_model, m.observed_at
