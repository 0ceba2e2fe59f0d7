-- Billing terms per provider for `gpucat cost`: increment and minimum charge in seconds (NULL
-- where the provider does not publish them).
SELECT provider, billing_increment_s, min_charge_s, fabric_gbps_per_node
FROM providers
