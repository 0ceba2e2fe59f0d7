-- Freshness: each source's budget (hours after its last sighting at which its offers are stale),
-- written by every refresh from the schedules file (gpucat/schedules.toml), and on every current
-- offer its age and whether it is stale.
CREATE TABLE source_schedules (
    source            VARCHAR PRIMARY KEY,
    schedule_group    VARCHAR NOT NULL,
    cron              VARCHAR NOT NULL,     -- UTC
    stale_after_hours DOUBLE NOT NULL
);

-- Every offer_versions column but the versioning ones (so fx_rate_date and any column a later
-- migration adds reach the view), then freshness. age_hours counts from the last time the offer
-- was seen to now, or to the variable gpucat_now when set (a snapshot sets it to its own time,
-- so the same data exports the same bytes). A source without a budget is never stale.
CREATE OR REPLACE VIEW current_offers AS
SELECT o.* EXCLUDE (content_hash, valid_from, valid_to, first_run_id, last_run_id),
       o.valid_from AS price_since,
       date_diff('second', o.scraped_at, coalesce(CAST(getvariable('gpucat_now') AS TIMESTAMPTZ), now())) / 3600.0 AS age_hours,
       coalesce(age_hours > s.stale_after_hours, false) AS is_stale
FROM offer_versions AS o
LEFT JOIN source_schedules AS s USING (source)
WHERE o.valid_to IS NULL;
