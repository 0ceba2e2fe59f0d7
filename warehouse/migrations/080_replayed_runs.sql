-- Which runs replayed a capture instead of asking the provider, and from which capture.
--
-- `capture` is the capture directory a replayed run read (NULL for a live run) and `captured_at`
-- the newest fetch time its responses carry (their manifest's `fetched_at`). Freshness follows
-- one rule everywhere (offers, fit, cost, report, status): an offer last seen by a replayed run
-- is judged as of that run's capture time, so a bundled capture reads the same on any day; an
-- offer last seen by a live run is judged against the clock (`now()`, or the variable gpucat_now
-- when set: a snapshot's time, or a frozen clock). `age_hours` stays the data's own age against
-- that clock, so a replay still says how old it is.
ALTER TABLE scrape_runs ADD COLUMN IF NOT EXISTS capture VARCHAR;
ALTER TABLE scrape_runs ADD COLUMN IF NOT EXISTS captured_at TIMESTAMPTZ;

CREATE OR REPLACE VIEW current_offers AS
SELECT o.* EXCLUDE (content_hash, valid_from, valid_to, first_run_id, last_run_id),
       o.valid_from AS price_since,
       date_diff('second', o.scraped_at, coalesce(CAST(getvariable('gpucat_now') AS TIMESTAMPTZ), now())) / 3600.0 AS age_hours,
       coalesce(
           date_diff('second', o.scraped_at,
                     CASE WHEN r.capture IS NOT NULL AND r.captured_at IS NOT NULL THEN r.captured_at
                          ELSE coalesce(CAST(getvariable('gpucat_now') AS TIMESTAMPTZ), now()) END) / 3600.0
           > s.stale_after_hours,
           false) AS is_stale,
       r.capture IS NOT NULL AS replayed
FROM offer_versions AS o
LEFT JOIN source_schedules AS s USING (source)
LEFT JOIN scrape_runs AS r ON r.run_id = o.last_run_id
WHERE o.valid_to IS NULL;
