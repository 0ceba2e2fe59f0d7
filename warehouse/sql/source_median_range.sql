-- The lowest and highest median price per GPU-hour of each GPU model a source has listed since
-- $since: its medians as of the window's start and as of every later load (source_gpu_medians,
-- migration 100). A batch may move no further from that range than one step may (many small
-- steps walk no further than one).
SELECT gpu_model, min(median_usd_per_gpu_hour) AS lowest, max(median_usd_per_gpu_hour) AS highest
FROM source_gpu_medians
WHERE source = $source
  AND as_of >= coalesce((SELECT max(as_of) FROM source_gpu_medians WHERE source = $source AND as_of <= $since), $since)
GROUP BY gpu_model
