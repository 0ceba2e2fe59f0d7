-- A source's medians as of this load of its offers (inside the load's transaction, after the merge).
INSERT INTO source_gpu_medians
SELECT source, gpu_model, CAST($observed_at AS TIMESTAMPTZ), median(usd_per_gpu_hour)
FROM offer_versions
WHERE source = $source AND valid_to IS NULL AND content_hash NOT LIKE 'delisted:%'
GROUP BY source, gpu_model
