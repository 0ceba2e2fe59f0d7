-- When each source's latest refresh started, whatever its outcome: whether a schedule group is due.
SELECT source, max(started_at) AS started_at
FROM scrape_runs
GROUP BY source
