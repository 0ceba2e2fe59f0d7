-- The candidates (temporary table cost_candidates) `gpucat cost` shows, by (provider, offer_id).
SELECT c.*
FROM cost_candidates AS c
JOIN (SELECT unnest(CAST($keys AS STRUCT(provider VARCHAR, offer_id VARCHAR)[]), recursive := true)) AS k
  USING (provider, offer_id)
