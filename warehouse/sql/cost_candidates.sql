-- Every configuration a job fits on, in one pass for every GPU count `gpucat cost` considers: the
-- fit_offers rule (macros.sql) joined with the need per count ($gpus[i] GPUs needing $per_gpu_gb[i]
-- each), each offer kept at its smallest fitting count, as `gpucat.fit` keeps it. The filters of
-- `gpucat cost` come back as columns rather than a WHERE, so one pass also counts what each of
-- them leaves out (an empty answer is explained from these rows, not by asking again). `gpucat.cost.rank`
-- keeps the result as the temporary table cost_candidates for the other cost_*.sql queries.
WITH needs AS (
    SELECT unnest(CAST($gpus AS INTEGER[])) AS gpus, unnest(CAST($per_gpu_gb AS DOUBLE[])) AS per_gpu_gb
),
fitting AS (
    SELECT o.provider, o.offer_id, o.instance_type, o.region, o.market, o.gpu_model, o.availability,
           o.interconnect, o.fabric, o.fabric_gbps, o.storage_usd_per_gb_month, o.egress_usd_per_gb, o.is_stale,
           CAST(CASE WHEN o.gpu_count < 1 THEN 1 ELSE n.gpus / o.gpu_count END AS INTEGER) AS nodes,
           n.gpus AS gpus_total,
           o.usd_per_hour * CASE WHEN o.gpu_count < 1 THEN 1 ELSE n.gpus / o.gpu_count END AS usd_per_hour_total,
           g.bf16 AS gpu_bf16, g.bnb_4bit AS gpu_bnb_4bit
    FROM current_offers AS o
    JOIN gpu_models AS g USING (gpu_model)
    JOIN needs AS n
      ON o.gpu_memory_gb * (1 - $headroom) >= n.per_gpu_gb
     AND (o.gpu_count = n.gpus
          OR (n.gpus = 1 AND o.gpu_count < 1)
          OR (o.fabric IS NOT NULL AND o.gpu_count >= 1 AND o.gpu_count = floor(o.gpu_count)
              AND n.gpus > o.gpu_count AND n.gpus % o.gpu_count = 0))
    QUALIFY row_number() OVER (PARTITION BY o.provider, o.offer_id ORDER BY n.gpus) = 1
)
-- `key` numbers each hardware the time model sees (and each market: spot counts its checkpoint writes apart).
SELECT *, dense_rank() OVER (ORDER BY provider, gpu_model, gpus_total, nodes, interconnect, fabric, fabric_gbps,
                                      market = 'spot') AS key
FROM fitting
