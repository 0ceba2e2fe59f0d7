-- Configurations on which a job needing $per_gpu_gb on each of $gpus GPUs fits (fit_offers),
-- with the card's capabilities for notes, the same filters as `gpucat offers`, and only offers
-- within their source's freshness budget unless $include_stale.
SELECT f.provider, f.offer_id, f.instance_type, f.region, f.market, f.tier, f.gpu_model, f.gpu_count,
       f.gpu_memory_gb, f.usd_per_hour, f.usd_per_gpu_hour, f.availability, f.interconnect, f.fabric,
       f.nodes, f.gpus_total, f.usd_per_hour_total, f.need_gb_per_gpu, f.usable_gb_per_gpu,
       f.storage_usd_per_gb_month, f.egress_usd_per_gb, f.price_excludes,
       g.bf16 AS gpu_bf16, g.bnb_4bit AS gpu_bnb_4bit, f.source_url, f.scraped_at
FROM fit_offers(per_gpu_gb := $per_gpu_gb, gpus := $gpus, headroom := $headroom) AS f
JOIN gpu_models AS g USING (gpu_model)
WHERE (len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), f.provider))
  AND (CAST($market AS VARCHAR) IS NULL OR f.market = $market)
  AND (NOT CAST($available_only AS BOOLEAN) OR f.availability IS DISTINCT FROM 'unavailable')  -- unknown stock stays
  AND (CAST($include_stale AS BOOLEAN) OR NOT f.is_stale)  -- gpucat.freshness.FRESH_OFFERS
ORDER BY f.usd_per_hour_total, f.provider, f.offer_id
