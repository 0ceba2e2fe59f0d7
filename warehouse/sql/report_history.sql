-- The report's price history: at every time an offer version began, the cheapest $/GPU-hour
-- among the versions valid then, per GPU model and market (a step line per model).
WITH changes AS (SELECT DISTINCT valid_from AS at FROM offer_versions)
SELECT v.gpu_model, v.market, c.at, min(v.usd_per_gpu_hour) AS usd_per_gpu_hour
FROM changes AS c
JOIN offer_versions AS v ON v.valid_from <= c.at AND (v.valid_to IS NULL OR v.valid_to > c.at)
WHERE v.usd_per_gpu_hour > 0
GROUP BY ALL
ORDER BY v.gpu_model, v.market, c.at
