-- The report's availability: current offers per provider by reported stock.
SELECT provider, coalesce(availability, 'unknown') AS availability, count(*) AS offers
FROM current_offers
WHERE CAST($include_stale AS BOOLEAN) OR NOT is_stale  -- gpucat.freshness.FRESH_OFFERS
GROUP BY ALL
ORDER BY provider, availability
