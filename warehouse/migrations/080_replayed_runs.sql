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

-- The alias again, so its stored column list carries `replayed` on a file as on a lake.
CREATE OR REPLACE VIEW offers AS
SELECT * FROM current_offers;

-- The storage a fine-tuning job can keep its dataset and checkpoints on, one row per product: the
-- one rule `gpucat cost` prices and `gpucat providers` shows the cheapest of. A volume, network
-- volume or block volume known to survive a stop or a terminate, or billed while stopped (a disk
-- billed while its instance is stopped is kept), with a published price. Each product is its own
-- choice (EBS gp3 next to gp2). Prices of one product by size ("Network volume (first 1 TB)" /
-- "(above 1 TB)": the qualifier in brackets) carry no bounds here, so the highest is used: what a
-- job's first GB pays. The kept rate is the stopped rate where one is published, else the rate
-- (the full rate for storage that survives a terminate: it outlives the instance).
CREATE OR REPLACE VIEW kept_storage AS
SELECT provider, kind, regexp_replace(product, '\s*\(.*\)$', '') AS product,
       max(usd_per_gb_month) AS usd_per_gb_month,
       max(CASE WHEN persists_on_terminate IS TRUE THEN usd_per_gb_month
                ELSE coalesce(usd_per_gb_month_stopped, usd_per_gb_month) END) AS usd_per_gb_month_kept
FROM storage_terms
WHERE kind IN ('volume', 'network_volume', 'block')
  AND (persists_on_stop IS TRUE OR persists_on_terminate IS TRUE OR billed_while_stopped IS TRUE)
  AND usd_per_gb_month IS NOT NULL
GROUP BY provider, kind, regexp_replace(product, '\s*\(.*\)$', '');
