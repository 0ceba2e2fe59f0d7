-- One truth per provider: when a source loads, the current offers of its siblings (its primary,
-- or its fallbacks: the same offers from another endpoint) stop being current. Their history stays.
UPDATE offer_versions
SET valid_to = greatest(valid_from, CAST($observed_at AS TIMESTAMPTZ))
WHERE valid_to IS NULL AND provider = $provider AND list_contains(CAST($siblings AS VARCHAR[]), source)
