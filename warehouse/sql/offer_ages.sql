-- How old given offers' data is and whether a replayed capture loaded them; $keys holds
-- 'provider:offer_id' strings.
SELECT provider, offer_id, age_hours, replayed
FROM current_offers
WHERE list_contains(CAST($keys AS VARCHAR[]), provider || ':' || offer_id)
