-- Per source: its latest run, its latest successful run, and what it could not map.
-- unknown_gpus: distinct names of `unknown_gpu` and `unknown_gpu_count` rejections in the latest run;
-- unmapped_rows: rejected rows of that run whose reason is any `unknown_*` (GPU, GPU count,
-- instance type): offers lost for want of a mapping. rows_skipped (out-of-scope rows such as
-- CPU-only VMs, migration 006) are counted apart so they never hide those.
-- quarantined_runs: batches held by the anomaly checks, waiting for `gpucat accept`.
WITH last AS (
    SELECT *
    FROM scrape_runs
    QUALIFY row_number() OVER (PARTITION BY source ORDER BY finished_at DESC) = 1
),
last_ok AS (
    SELECT source, max(finished_at) AS last_ok_at
    FROM scrape_runs
    WHERE status = 'ok'
    GROUP BY source
),
unknown AS (
    SELECT r.source, list(DISTINCT name ORDER BY name) FILTER (WHERE name IS NOT NULL) AS unknown_gpus
    FROM rejected_rows AS r
    JOIN last USING (run_id),
         unnest(r.reasons) AS t(reason),
         LATERAL (SELECT regexp_extract(reason, '^unknown_gpu(?:_count)?: ''?(.*?)''?$', 1) AS name)
    WHERE reason LIKE 'unknown_gpu:%' OR reason LIKE 'unknown_gpu_count:%'
    GROUP BY r.source
),
unmapped AS (
    SELECT r.source, count(*) AS unmapped_rows
    FROM rejected_rows AS r
    JOIN last USING (run_id)
    WHERE list_bool_or([starts_with(reason, 'unknown_') FOR reason IN r.reasons])
    GROUP BY r.source
),
held AS (
    -- Quarantined batches not yet accepted: `gpucat accept RUN_ID` loads one.
    SELECT source, list(run_id ORDER BY quarantined_at) AS quarantined_runs
    FROM quarantines
    WHERE accepted_run_id IS NULL
    GROUP BY source
)
SELECT last.source, last.provider, last.status, last.finished_at AS last_run_at, last_ok.last_ok_at,
       last.rows_fetched, last.rows_valid, last.rows_rejected, last.rows_skipped, last.pages, last.error,
       coalesce(unknown.unknown_gpus, []) AS unknown_gpus,
       coalesce(unmapped.unmapped_rows, 0) AS unmapped_rows,
       coalesce(held.quarantined_runs, []) AS quarantined_runs
FROM last
LEFT JOIN last_ok USING (source)
LEFT JOIN unknown USING (source)
LEFT JOIN unmapped USING (source)
LEFT JOIN held USING (source)
ORDER BY last.source
