-- Sources with stale current offers (older than their budget), the oldest first.
SELECT source, max(age_hours) AS age_hours, any_value(s.stale_after_hours) AS stale_after_hours, count(*) AS offers
FROM current_offers
JOIN source_schedules AS s USING (source)
WHERE is_stale
GROUP BY source
ORDER BY age_hours DESC, source
