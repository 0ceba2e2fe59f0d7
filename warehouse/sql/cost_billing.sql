-- Billing terms per provider for `gpucat cost`: increment and minimum charge, in seconds.
SELECT provider, billing_increment_s, min_charge_s
FROM providers
