-- Per source with current data: how old its data is and whether it came from a replayed capture
-- (view source_clock, migration 096). age_hours counts from seen_at to the clock (now(), or the
-- variable gpucat_now when set).
SELECT c.source, c.seen_at, c.capture, c.captured_at,
       date_diff('second', c.seen_at, coalesce(CAST(getvariable('gpucat_now') AS TIMESTAMPTZ), now())) / 3600.0 AS age_hours
FROM source_clock AS c
WHERE c.seen_at IS NOT NULL
ORDER BY c.source
