-- Macros are (re)created on every writable open, so plain-SQL users of the file get the
-- current definitions. Parameters are DuckDB macro parameters, never string-built.

-- Offers where a job needing `per_gpu_gb` on each of `gpus` GPUs fits: either one instance
-- with exactly `gpus` GPUs, or several identical instances when the offer has a multi-node
-- fabric. A fractional-GPU slice (gpu_count < 1) counts as one device of its own memory.
-- `headroom` is the fraction of each card's memory kept free.
CREATE OR REPLACE MACRO fit_offers(per_gpu_gb, gpus, headroom := 0.1) AS TABLE
SELECT
    o.*,
    CAST(CASE WHEN o.gpu_count < 1 THEN 1 ELSE gpus / o.gpu_count END AS INTEGER) AS nodes,
    CAST(gpus AS INTEGER) AS gpus_total,
    o.usd_per_hour * CASE WHEN o.gpu_count < 1 THEN 1 ELSE gpus / o.gpu_count END AS usd_per_hour_total,
    CAST(per_gpu_gb AS DOUBLE) AS need_gb_per_gpu,
    o.gpu_memory_gb * (1 - headroom) AS usable_gb_per_gpu
FROM current_offers AS o
WHERE o.gpu_memory_gb * (1 - headroom) >= per_gpu_gb
  AND (
        o.gpu_count = gpus
     OR (gpus = 1 AND o.gpu_count < 1)
     OR (o.fabric IS NOT NULL AND o.gpu_count >= 1 AND o.gpu_count = floor(o.gpu_count)
         AND gpus > o.gpu_count AND gpus % o.gpu_count = 0)
  );
