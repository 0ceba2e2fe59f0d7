-- Per provider, the oldest verified_on among its terms rows (what `gpucat status` ages).
SELECT provider, min(verified_on) AS oldest_verified_on
FROM (
    SELECT provider, verified_on FROM providers
    UNION ALL SELECT provider, verified_on FROM storage_terms
    UNION ALL SELECT provider, verified_on FROM egress_terms
)
GROUP BY provider
ORDER BY provider
