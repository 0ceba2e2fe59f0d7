-- The lowest and highest median price per GPU-hour of each GPU model a source has listed since
-- $since: its median at the window's start and at every later change of its offers. A batch may
-- move no further from that range than one step may (many small steps walk no further than one).
WITH moments AS (
    SELECT DISTINCT valid_from AS at FROM offer_versions WHERE source = $source AND valid_from > $since
    UNION SELECT CAST($since AS TIMESTAMPTZ)
),
medians AS (
    SELECT m.at, v.gpu_model, median(v.usd_per_gpu_hour) AS median_usd_per_gpu_hour
    FROM moments AS m
    JOIN offer_versions AS v
      ON v.source = $source AND v.valid_from <= m.at AND (v.valid_to IS NULL OR v.valid_to > m.at)
    WHERE v.content_hash NOT LIKE 'delisted:%'
    GROUP BY m.at, v.gpu_model
)
SELECT gpu_model, min(median_usd_per_gpu_hour) AS lowest, max(median_usd_per_gpu_hour) AS highest
FROM medians
GROUP BY gpu_model
