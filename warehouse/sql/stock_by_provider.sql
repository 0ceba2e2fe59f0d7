-- Per provider with current offers: does any offer carry stock data (available or unavailable)?
SELECT provider, bool_or(availability IN ('available', 'unavailable')) AS reports_stock
FROM current_offers
WHERE len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), provider)
GROUP BY provider
ORDER BY provider
