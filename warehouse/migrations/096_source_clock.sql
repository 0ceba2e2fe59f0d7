-- One place that says, per source, when its data was last confirmed: its last good run (ok, or
-- unchanged: nothing new to load) with that run's capture (migration 080), and the newest
-- last-seen time of its current rows of every versioned table. `status` (data_clock.sql) and
-- freshness (source_freshness.sql) both read it, so a new versioned table is added here once.
CREATE OR REPLACE VIEW source_clock AS
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
)
SELECT coalesce(g.source, seen.source) AS source, g.last_good_at, g.capture, g.captured_at, seen.seen_at
FROM last_good AS g
FULL OUTER JOIN seen ON seen.source = g.source;
