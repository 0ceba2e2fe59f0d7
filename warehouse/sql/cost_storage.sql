-- The cheapest storage that survives a stop, per provider: where a fine-tuning job keeps its
-- dataset and checkpoints.
SELECT provider, min(usd_per_gb_month) AS usd_per_gb_month
FROM storage_terms
WHERE persists_on_stop
GROUP BY provider
