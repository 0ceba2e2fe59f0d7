-- Per source with a freshness budget: stale when its last good run (ok, or unchanged: nothing new
-- to load) is older than the budget or never happened, or when the newest of its current rows
-- was last seen longer ago than that. A source whose last good run replayed a capture is judged
-- as of that capture's time (migration 080), as its offers are in current_offers: a replay never
-- goes stale by the calendar, and says how old it is instead.
WITH last_good AS (
    SELECT source, max(finished_at) AS last_good_at,
           arg_max(capture, finished_at) AS capture, arg_max(captured_at, finished_at) AS captured_at
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
SELECT s.source, s.stale_after_hours,
       CASE WHEN g.capture IS NOT NULL AND g.captured_at IS NOT NULL
            THEN coalesce(date_diff('second', seen.seen_at, g.captured_at) / 3600.0 > s.stale_after_hours, false)
            ELSE coalesce(date_diff('second', g.last_good_at, clock.now) / 3600.0 > s.stale_after_hours, true)
                 OR coalesce(date_diff('second', seen.seen_at, clock.now) / 3600.0 > s.stale_after_hours, false)
       END AS stale
FROM source_schedules AS s
CROSS JOIN clock
LEFT JOIN last_good AS g USING (source)
LEFT JOIN seen USING (source)
ORDER BY s.source
