-- A source's current offers (its last good data): what an incoming batch is compared with.
-- Read from offer_versions, not the current_offers view: the view's freshness joins (every
-- scrape run, the schedules) add nothing here and grow with history.
SELECT provider, offer_id, gpu_model, region, source_url, usd_per_gpu_hour
FROM offer_versions
WHERE source = $source AND valid_to IS NULL
