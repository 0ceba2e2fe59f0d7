-- The distinct configurations among the candidates (temporary table cost_candidates): the time
-- model runs once per hardware, not once per offer. `key` numbers them for cost_rank.sql;
-- `wanted` says whether any of its offers passes the filters (only those are timed).
SELECT key, any_value(provider) AS provider, any_value(gpu_model) AS gpu_model, any_value(gpus_total) AS gpus_total,
       any_value(nodes) AS nodes, any_value(interconnect) AS interconnect, any_value(fabric) AS fabric,
       any_value(fabric_gbps) AS fabric_gbps, any_value(market) AS market,
       any_value(gpu_bf16) AS gpu_bf16, any_value(gpu_bnb_4bit) AS gpu_bnb_4bit,
       bool_or((len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), provider))
               AND (CAST($market AS VARCHAR) IS NULL OR market = $market)
               AND (NOT CAST($available_only AS BOOLEAN) OR availability IS DISTINCT FROM 'unavailable')
               AND (CAST($include_stale AS BOOLEAN) OR NOT is_stale)) AS wanted
FROM cost_candidates
GROUP BY key
ORDER BY key
