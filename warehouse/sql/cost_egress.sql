-- Internet egress tiers per provider ([from_gb, to_gb) of a month's traffic, USD per GB; a free
-- allowance is the $0 first tier), where priced.
SELECT provider, tier, from_gb, to_gb, usd_per_gb, free_allowance_gb_month
FROM egress_terms
WHERE scope = 'internet' AND usd_per_gb IS NOT NULL AND from_gb IS NOT NULL
ORDER BY provider, tier
