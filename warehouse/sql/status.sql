-- Per source: its latest run, its latest successful run, GPU names it could not map, and its
-- quarantined runs waiting for `gpucat accept`.
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
    SELECT r.source, list(DISTINCT name ORDER BY name) AS unknown_gpus
    FROM rejected_rows AS r
    JOIN last USING (run_id),
         unnest(r.reasons) AS t(reason),
         LATERAL (SELECT regexp_extract(reason, '^unknown_gpu: ''?(.*?)''?$', 1) AS name)
    WHERE reason LIKE 'unknown_gpu:%'
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
       last.rows_fetched, last.rows_valid, last.rows_rejected, last.pages, last.error,
       coalesce(unknown.unknown_gpus, []) AS unknown_gpus, coalesce(held.quarantined_runs, []) AS quarantined_runs
FROM last
LEFT JOIN last_ok USING (source)
LEFT JOIN unknown USING (source)
LEFT JOIN held USING (source)
ORDER BY last.source
