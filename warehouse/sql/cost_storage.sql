-- Storage a fine-tuning job can keep its dataset and checkpoints on, per product (the view
-- kept_storage, migration 080: the same rule `gpucat providers` shows the cheapest of). After the
-- run the data is kept on the stopped instance at the kept rate.
SELECT provider, kind, product, usd_per_gb_month, usd_per_gb_month_kept
FROM kept_storage
ORDER BY provider, kind, product
