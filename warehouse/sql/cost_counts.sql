-- How many candidates (temporary table cost_candidates) each combination of `gpucat cost`'s
-- filters keeps, split by whether they can be priced ($unpriced: the hardware keys that cannot):
-- the one pass's counts, from which an empty answer is explained.
SELECT provider, market, availability = 'unavailable' AS unavailable, is_stale,
       list_contains(CAST($unpriced AS BIGINT[]), key) AS unpriced, count(*) AS offers
FROM cost_candidates
GROUP BY ALL
