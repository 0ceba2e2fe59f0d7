-- The candidates (temporary table cost_candidates) the filters keep but whose hardware key cannot
-- be priced ($unpriced), in fit's order: each is named with its missing figure.
SELECT provider, offer_id, gpu_model, key
FROM cost_candidates
WHERE list_contains(CAST($unpriced AS BIGINT[]), key)
  AND (len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), provider))
  AND (CAST($market AS VARCHAR) IS NULL OR market = $market)
  AND (NOT CAST($available_only AS BOOLEAN) OR availability IS DISTINCT FROM 'unavailable')
  AND (CAST($include_stale AS BOOLEAN) OR NOT is_stale)
ORDER BY usd_per_hour_total, gpus_total, provider, offer_id
