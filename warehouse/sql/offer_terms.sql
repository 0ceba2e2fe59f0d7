-- Each current offer with its provider's terms: billing step, stop and spot behaviour, the
-- cheapest priced disk a job can keep between runs (a volume, network volume or block volume
-- not known to be lost on stop), and internet egress (the first tier that charges, else an
-- unbounded free tier; NULL when what follows a free allowance is unknown).
SELECT o.provider, o.offer_id, o.gpu_model, o.market, o.usd_per_hour,
       p.billing_increment_s, p.min_charge_s, p.stopped_instances_billed,
       p.spot_notice_s, p.spot_disk_fate, p.fabric AS provider_fabric,
       s.kind AS storage_kind, s.usd_per_gb_month AS storage_usd_per_gb_month,
       s.usd_per_gb_month_stopped AS storage_usd_per_gb_month_stopped, s.billed_while_stopped,
       e.usd_per_gb AS egress_usd_per_gb, e.free_allowance_gb_month AS egress_free_gb_month
FROM current_offers AS o
LEFT JOIN providers AS p USING (provider)
LEFT JOIN (
    SELECT * FROM storage_terms
    WHERE kind IN ('volume', 'network_volume', 'block') AND persists_on_stop IS NOT FALSE
      AND usd_per_gb_month IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY provider ORDER BY usd_per_gb_month, kind, product) = 1
) AS s USING (provider)
LEFT JOIN (
    SELECT * FROM egress_terms
    WHERE scope = 'internet' AND (usd_per_gb > 0 OR (usd_per_gb = 0 AND to_gb IS NULL))
    QUALIFY row_number() OVER (PARTITION BY provider ORDER BY usd_per_gb > 0 DESC, tier) = 1
) AS e USING (provider)
