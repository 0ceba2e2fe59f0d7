-- Current offers with optional filters; every parameter may be NULL (or an empty list) for "any".
-- Stale offers (past their source's freshness budget) only with $include_stale, as in fit and cost;
-- a NULL $limit returns every row. The last column, matching, counts every row that matched (the window
-- runs before the LIMIT), so `gpucat offers` says "showing 50 of N" without fetching N rows.
SELECT o.provider, o.instance_type, o.region, o.market, o.tier, o.gpu_model, o.gpu_count,
       o.gpu_memory_gb, o.vcpus, o.ram_gb, o.usd_per_hour, o.usd_per_gpu_hour, o.currency,
       o.availability, o.available_count, o.interconnect, o.fabric, o.fabric_gbps,
       o.offer_id, o.source, o.source_url, o.scraped_at, o.age_hours, o.is_stale, o.replayed,
       count(*) OVER () AS matching
FROM current_offers AS o
JOIN gpu_models AS g USING (gpu_model)
WHERE (len(CAST($gpus AS VARCHAR[])) = 0
       OR list_contains(CAST($gpus AS VARCHAR[]), lower(o.gpu_model))
       OR list_contains(CAST($gpus AS VARCHAR[]), lower(g.family)))
  AND (len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), o.provider))
  AND (CAST($gpu_count AS DOUBLE) IS NULL OR o.gpu_count = $gpu_count)
  AND (CAST($min_gpu_memory_gb AS DOUBLE) IS NULL OR o.gpu_memory_gb >= $min_gpu_memory_gb)
  AND (CAST($max_usd_per_gpu_hour AS DOUBLE) IS NULL OR o.usd_per_gpu_hour <= $max_usd_per_gpu_hour)
  AND (CAST($market AS VARCHAR) IS NULL OR o.market = $market)
  AND (NOT CAST($available_only AS BOOLEAN) OR o.availability IS DISTINCT FROM 'unavailable')  -- unknown stock stays
  AND (CAST($include_stale AS BOOLEAN) OR NOT o.is_stale)  -- gpucat.freshness.FRESH_OFFERS
ORDER BY o.usd_per_gpu_hour, o.gpu_count, o.provider, o.offer_id
LIMIT CAST($limit AS BIGINT)
