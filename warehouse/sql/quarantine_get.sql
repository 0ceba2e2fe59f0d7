-- A quarantined run, and whether a good run of its source loaded after it.
SELECT q.source, q.provider, q.quarantined_at, q.accepted_run_id,
       (SELECT count(*) FROM scrape_runs AS r
        WHERE r.source = q.source AND r.status = 'ok' AND r.finished_at > q.quarantined_at) AS newer_ok_runs
FROM quarantines AS q
WHERE q.run_id = $run_id
