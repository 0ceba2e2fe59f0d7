-- The report's availability: current offers per provider by reported stock.
SELECT provider, coalesce(availability, 'unknown') AS availability, count(*) AS offers
FROM current_offers
GROUP BY ALL
ORDER BY provider, availability
