-- Storage a fine-tuning job can keep its dataset and checkpoints on: products that survive a stop
-- or a terminate (a disk billed while its instance is stopped is kept while stopped) and have a
-- published price. After the run the data is kept on the stopped instance (at the stopped rate
-- where one is published) unless it survives a terminate. Each product is its own choice (EBS gp3
-- next to gp2: the job takes the cheaper, the disk `gpucat providers` shows); several prices for
-- one product (priced lower above 1 TB, say) carry no size bounds in storage_terms, so the
-- highest is used: what a job's first GB pays.
SELECT provider, kind, product,
       max(usd_per_gb_month) AS usd_per_gb_month,
       max(CASE WHEN persists_on_terminate IS TRUE THEN usd_per_gb_month
                ELSE coalesce(usd_per_gb_month_stopped, usd_per_gb_month) END) AS usd_per_gb_month_kept
FROM storage_terms
WHERE (persists_on_stop IS TRUE OR persists_on_terminate IS TRUE OR billed_while_stopped IS TRUE)
  AND usd_per_gb_month IS NOT NULL
  AND kind <> 'object_storage'
GROUP BY provider, kind, product
ORDER BY provider, kind, product
