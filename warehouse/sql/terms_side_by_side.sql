-- Provider terms side by side: billing and spot from `providers`, the cheapest priced disk a job
-- can keep between runs (the view kept_storage, migration 080: the rule and the figure
-- `gpucat cost` prices), and internet egress (the first rate that charges after any free
-- allowance; 0 only when the free tier is unbounded, NULL when what follows a free allowance is
-- unknown).
-- $providers: VARCHAR[] filter (empty = all).
WITH storage AS (
    SELECT provider, min(verified_on) AS storage_verified_on,
           (SELECT min(k.usd_per_gb_month) FROM kept_storage AS k WHERE k.provider = t.provider) AS persistent_storage_usd_per_gb_month
    FROM storage_terms AS t
    GROUP BY provider
),
internet AS (
    SELECT provider,
           -- the first tier that charges; else 0 when a free tier is unbounded; else unknown
           coalesce(min_by(usd_per_gb, tier) FILTER (WHERE usd_per_gb > 0),
                    max(usd_per_gb) FILTER (WHERE to_gb IS NULL)) AS egress_usd_per_gb,
           max(free_allowance_gb_month) AS egress_free_gb_month
    FROM egress_terms
    WHERE scope = 'internet'
    GROUP BY provider
),
egress_age AS (
    SELECT provider, min(verified_on) AS egress_verified_on FROM egress_terms GROUP BY provider
)
SELECT p.provider, p.display_name, p.billing_increment_s, p.min_charge_s, p.min_charge_usd,
       p.stopped_instances_billed, p.spot_offered, p.spot_notice_s, p.spot_disk_fate,
       p.ssh, p.custom_docker, p.jupyter, p.multi_node, p.fabric, p.fabric_gbps_per_node, p.price_basis,
       s.persistent_storage_usd_per_gb_month, i.egress_usd_per_gb, i.egress_free_gb_month,
       least(p.verified_on, s.storage_verified_on, a.egress_verified_on) AS oldest_verified_on
FROM providers AS p
LEFT JOIN storage AS s USING (provider)
LEFT JOIN internet AS i USING (provider)
LEFT JOIN egress_age AS a USING (provider)
WHERE len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), p.provider)
ORDER BY p.provider
