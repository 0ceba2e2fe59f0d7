-- Egress tiers per provider (GB of monthly volume, USD per GB) and the monthly free allowance.
SELECT provider, from_gb, to_gb, usd_per_gb, free_allowance_gb_month
FROM egress_terms
ORDER BY provider, from_gb
