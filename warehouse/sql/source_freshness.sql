-- Per source with a freshness budget: stale when its last good run (ok, or unchanged: nothing new
-- to load) is older than the budget or never happened, or when the newest of its current rows
-- was last seen longer ago than that (view source_clock, migration 096). A source whose last good
-- run replayed a capture is judged as of that capture's time (migration 080), as its offers are in
-- current_offers: a replay never goes stale by the calendar, and says how old it is instead.
WITH clock AS (
    SELECT coalesce(CAST(getvariable('gpucat_now') AS TIMESTAMPTZ), now()) AS now
)
SELECT s.source, s.stale_after_hours,
       CASE WHEN c.capture IS NOT NULL AND c.captured_at IS NOT NULL
            THEN coalesce(date_diff('second', c.seen_at, c.captured_at) / 3600.0 > s.stale_after_hours, false)
            ELSE coalesce(date_diff('second', c.last_good_at, clock.now) / 3600.0 > s.stale_after_hours, true)
                 OR coalesce(date_diff('second', c.seen_at, clock.now) / 3600.0 > s.stale_after_hours, false)
       END AS stale
FROM source_schedules AS s
CROSS JOIN clock
LEFT JOIN source_clock AS c USING (source)
ORDER BY s.source
