-- Marketplace hosts price their own disk and bandwidth, and some per-GPU prices cover only the
-- GPU (vCPU, RAM and disk extra): four offer columns say so instead of packing it into `tier`.
ALTER TABLE offer_versions ADD COLUMN storage_usd_per_gb_month DOUBLE;

ALTER TABLE offer_versions ADD COLUMN egress_usd_per_gb DOUBLE;

ALTER TABLE offer_versions ADD COLUMN ingress_usd_per_gb DOUBLE;

ALTER TABLE offer_versions ADD COLUMN price_excludes VARCHAR;

CREATE OR REPLACE VIEW current_offers AS
SELECT * EXCLUDE (content_hash, valid_from, valid_to, first_run_id, last_run_id), valid_from AS price_since
FROM offer_versions
WHERE valid_to IS NULL;
