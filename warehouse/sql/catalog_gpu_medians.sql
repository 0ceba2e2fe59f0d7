-- Median price per GPU-hour of every GPU model across the current catalog: the anchor of the
-- plausibility band a new batch's prices are checked against.
SELECT gpu_model, median(usd_per_gpu_hour) AS median_usd_per_gpu_hour, count(*) AS offers
FROM current_offers
GROUP BY gpu_model
