-- The report's price spread: each provider's cheapest $/GPU-hour per GPU model and market, with
-- the card's memory for $/GB-VRAM. Fractional slices are priced per whole GPU already. Stale
-- offers only with $include_stale, as in offers, fit and cost.
SELECT o.gpu_model, o.market, o.provider, g.memory_gb AS gpu_memory_gb,
       min(o.usd_per_gpu_hour) AS usd_per_gpu_hour,
       min(o.usd_per_gpu_hour) / g.memory_gb AS usd_per_gb_vram_hour,
       arg_min(o.instance_type, o.usd_per_gpu_hour) AS instance_type,
       arg_min(o.region, o.usd_per_gpu_hour) AS region,
       count(*) AS offers
FROM current_offers AS o
JOIN gpu_models AS g USING (gpu_model)
WHERE o.usd_per_gpu_hour > 0
  AND (CAST($include_stale AS BOOLEAN) OR NOT o.is_stale)  -- gpucat.freshness.FRESH_OFFERS
GROUP BY o.gpu_model, o.market, o.provider, g.memory_gb
ORDER BY o.gpu_model, o.market, usd_per_gpu_hour, o.provider
