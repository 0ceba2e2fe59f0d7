-- The egress_terms rows of some providers. $providers: VARCHAR[].
SELECT * FROM egress_terms WHERE list_contains(CAST($providers AS VARCHAR[]), provider) ORDER BY provider, scope, tier
