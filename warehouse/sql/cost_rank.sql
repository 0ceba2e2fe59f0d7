-- `gpucat cost` in set form: every candidate (temporary table cost_candidates) priced at once and
-- ranked by what the whole job costs. The arithmetic is `gpucat.cost.jobcost.job_cost`'s, step for
-- step and in the same order (tests/cost/test_set_form.py holds them equal):
-- $hardware: per hardware key, why it cannot be priced (reason) or the job's hours and sizes and
--   the provider's egress charge for that volume (egress_usd; NULL where its tiers stop short);
-- $billing: increment and minimum charge per provider that publishes them;
-- $storage: each provider's storage products that survive a stop (per GB-month running, kept);
-- $spot_default: the assumed interruptions per instance-hour per provider (default_spot_risk),
--   used where AWS Spot Advisor publishes no band for the instance (interruption_rates).
-- The rows come back cheapest first, filtered by $providers, $market, $available_only and
-- $include_stale; cost_counts.sql counts the same rows by filter.
WITH hardware AS (SELECT unnest(CAST($hardware AS STRUCT(key BIGINT, reason VARCHAR, hours DOUBLE, storage_gb DOUBLE,
                          checkpoint_gb DOUBLE, egress_gb DOUBLE, egress_usd DOUBLE, has_egress BOOLEAN)[]), recursive := true)),
billing AS (SELECT unnest(CAST($billing AS STRUCT(provider VARCHAR, increment_s DOUBLE, min_charge_s DOUBLE)[]), recursive := true)),
storage AS (SELECT unnest(CAST($storage AS STRUCT(provider VARCHAR, run DOUBLE, kept DOUBLE)[]), recursive := true)),
spot_default AS (SELECT unnest(CAST($spot_default AS STRUCT(provider VARCHAR, rate DOUBLE)[]), recursive := true)),
bands AS (
    SELECT provider, region, instance_type,
           (band_lower_pct + CASE WHEN band_upper_pct >= 100 THEN band_lower_pct + 10 ELSE band_upper_pct END) / 2 / 100 / 730.0 AS rate
    FROM interruption_rates
    WHERE os = 'Linux'
),
priced AS (
    SELECT c.provider, c.offer_id, c.market, c.nodes, c.usd_per_hour_total AS usd, c.storage_usd_per_gb_month AS own_storage,
           c.egress_usd_per_gb AS own_egress, h.hours, h.storage_gb, h.checkpoint_gb, h.egress_gb, h.egress_usd AS provider_egress,
           h.has_egress, b.increment_s, b.min_charge_s, coalesce(nullif(b.increment_s, 0), 1.0) AS step_s,
           coalesce(r.rate, d.rate) * c.nodes AS rate
    FROM cost_candidates AS c
    JOIN hardware AS h USING (key)
    LEFT JOIN billing AS b USING (provider)
    LEFT JOIN bands AS r ON c.market = 'spot' AND r.provider = c.provider AND r.region = c.region AND r.instance_type = c.instance_type
    LEFT JOIN spot_default AS d ON d.provider = c.provider
    WHERE h.reason IS NULL
      AND (len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), c.provider))
      AND (CAST($market AS VARCHAR) IS NULL OR c.market = $market)
      AND (NOT CAST($available_only AS BOOLEAN) OR c.availability IS DISTINCT FROM 'unavailable')
      AND (CAST($include_stale AS BOOLEAN) OR NOT c.is_stale)
),
spot AS (
    SELECT *, CASE WHEN market = 'spot' THEN (hours + hours / $checkpoint_every_h * checkpoint_gb / $checkpoint_write_gbps / 3600)
                                             / (1 - rate * ($checkpoint_every_h / 2 + $restart_h)) END AS total_h,
           market = 'spot' AND rate * ($checkpoint_every_h / 2 + $restart_h) >= 1 AS unrecoverable
    FROM priced
),
run AS (
    SELECT *, coalesce(rate * total_h, 0.0) AS interruptions, hours + coalesce(total_h - hours, 0.0) AS run_h
    FROM spot
),
billed AS (
    SELECT *,
           CASE WHEN increment_s IS NULL THEN hours * 3600
                ELSE greatest(min_charge_s, ceil(hours * 3600 / step_s - 1e-9) * step_s) END AS base_s,
           CASE WHEN increment_s IS NULL THEN run_h * 3600
                ELSE greatest(min_charge_s, ceil(run_h * 3600 / step_s - 1e-9) * step_s)
                     + CASE WHEN interruptions > 0 THEN interruptions * increment_s / 2 ELSE 0.0 END END AS total_s
    FROM run
),
parts AS (
    SELECT provider, offer_id, run_h, unrecoverable,
           base_s / 3600 * usd AS compute_usd,
           (total_s - base_s) / 3600 * usd AS spot_overhead_usd,
           CASE WHEN own_storage IS NOT NULL THEN storage_gb * (own_storage * run_h + own_storage * $retention_h) / 730.0
                ELSE (SELECT min(storage_gb * (s.run * run_h + s.kept * $retention_h) / 730.0)
                      FROM storage AS s WHERE s.provider = billed.provider) END AS storage_usd,
           CASE WHEN own_egress IS NOT NULL THEN CASE WHEN egress_gb > 0 THEN egress_gb * own_egress ELSE 0.0 END
                WHEN has_egress THEN provider_egress END AS egress_usd
    FROM billed
)
SELECT provider, offer_id, unrecoverable,
       compute_usd + coalesce(storage_usd, 0.0) + coalesce(egress_usd, 0.0) + spot_overhead_usd AS total_usd,
       run_h AS hours
FROM parts
ORDER BY unrecoverable DESC, total_usd, hours, provider, offer_id
LIMIT $limit
