-- Per source with current data: how old its data is and whether it came from a replayed capture.
-- seen_at: the newest last-seen time of its current rows (offers, interruption rates, exchange
-- rates, scraped terms); capture / captured_at: its last good run's capture directory and the
-- newest fetch time the capture carries (NULL for a live run, migration 080). age_hours counts
-- from seen_at to the clock (now(), or the variable gpucat_now when set).
WITH last_good AS (
    SELECT source, arg_max(capture, finished_at) AS capture, arg_max(captured_at, finished_at) AS captured_at
    FROM scrape_runs
    WHERE status IN ('ok', 'unchanged')
    GROUP BY source
),
seen AS (
    SELECT source, max(scraped_at) AS seen_at
    FROM (
        SELECT source, scraped_at FROM offer_versions WHERE valid_to IS NULL
        UNION ALL
        SELECT source, scraped_at FROM interruption_rate_versions WHERE valid_to IS NULL
        UNION ALL
        SELECT source, scraped_at FROM exchange_rate_versions WHERE valid_to IS NULL
        UNION ALL
        SELECT source, scraped_at FROM scraped_storage_term_versions WHERE valid_to IS NULL
        UNION ALL
        SELECT source, scraped_at FROM scraped_egress_term_versions WHERE valid_to IS NULL
    )
    GROUP BY source
),
clock AS (
    SELECT coalesce(CAST(getvariable('gpucat_now') AS TIMESTAMPTZ), now()) AS now
)
SELECT seen.source, seen.seen_at, g.capture, g.captured_at,
       date_diff('second', seen.seen_at, clock.now) / 3600.0 AS age_hours
FROM seen
CROSS JOIN clock
LEFT JOIN last_good AS g USING (source)
ORDER BY seen.source
