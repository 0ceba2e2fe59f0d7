-- Median price per GPU-hour of every GPU model across the current offers of every provider but
-- the one being judged, with how many providers that is: a batch is judged against the others,
-- and only a quorum of them (warehouse/quarantine.py QUORUM) is trusted as an anchor. Read from
-- offer_versions, not the current_offers view, whose freshness joins grow with history.
SELECT gpu_model, median(usd_per_gpu_hour) AS median_usd_per_gpu_hour, count(DISTINCT provider) AS providers
FROM offer_versions
WHERE valid_to IS NULL AND provider <> $provider
GROUP BY gpu_model
