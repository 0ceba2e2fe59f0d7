-- A source's current offers (its last good data): what an incoming batch is compared with.
SELECT provider, offer_id, gpu_model, region, source_url, usd_per_gpu_hour
FROM current_offers
WHERE source = $source
