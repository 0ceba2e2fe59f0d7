-- Terms scraped from machine-readable price lists (sources that fill `scraped_storage_terms` and
-- `scraped_egress_terms`: aws-terms, azure-terms) next to the reviewed CSV rows.
--
-- The reviewed rows move to `reviewed_storage_terms` / `reviewed_egress_terms` (what every
-- refresh reloads from schemas/reference/terms/*.csv). Scraped rows are versioned like offers:
-- one row per distinct content, the current version has valid_to NULL. `storage_terms` and
-- `egress_terms` become views that every reader keeps using, with one precedence rule:
--
--   For a provider and storage kind (or egress scope) that a source prices in the provider's
--   reference region (`terms_reference_regions`), the scraped rows replace the reviewed ones.
--   What a price list does not state comes from the reviewed rows of the same provider and kind
--   (scope): a storage row's persists_on_stop / persists_on_terminate / billed_while_stopped
--   (from the reviewed row of the same product, else the first of that kind by product), an
--   egress schedule's free_allowance_gb_month; the evidence segments behind those figures come
--   along, and verified_on is the older of the two days. Every other reviewed row is unchanged.
--
-- `origin` says where a row comes from ('reviewed' or the source's name), `region` which
-- region's prices a scraped row quotes (NULL on reviewed rows, which quote the provider's pages).

ALTER TABLE storage_terms RENAME TO reviewed_storage_terms;
ALTER TABLE egress_terms RENAME TO reviewed_egress_terms;

CREATE TABLE scraped_storage_term_versions (
    provider                 VARCHAR NOT NULL,
    kind                     VARCHAR NOT NULL,
    product                  VARCHAR NOT NULL,
    region                   VARCHAR NOT NULL,
    usd_per_gb_month         DOUBLE,
    usd_per_gb_month_stopped DOUBLE,
    original_currency        VARCHAR,
    original_price           DOUBLE,
    original_unit            VARCHAR,
    persists_on_stop         BOOLEAN,
    persists_on_terminate    BOOLEAN,
    billed_while_stopped     BOOLEAN,
    max_size_gb              DOUBLE,
    read_throughput_mb_s     DOUBLE,
    source_url               VARCHAR NOT NULL,
    verified_on              DATE NOT NULL,        -- the day this content was first scraped
    evidence                 VARCHAR,
    notes                    VARCHAR,
    source                   VARCHAR NOT NULL,
    scraped_at               TIMESTAMPTZ NOT NULL,  -- last seen
    content_hash             VARCHAR NOT NULL,
    valid_from               TIMESTAMPTZ NOT NULL,
    valid_to                 TIMESTAMPTZ,
    first_run_id             VARCHAR NOT NULL,
    last_run_id              VARCHAR NOT NULL
);

CREATE TABLE scraped_egress_term_versions (
    provider                 VARCHAR NOT NULL,
    scope                    VARCHAR NOT NULL,
    region                   VARCHAR NOT NULL,
    tier                     INTEGER NOT NULL,
    from_gb                  DOUBLE,
    to_gb                    DOUBLE,
    usd_per_gb               DOUBLE,
    original_price           DOUBLE,
    original_unit            VARCHAR,
    free_allowance_gb_month  DOUBLE,
    source_url               VARCHAR NOT NULL,
    verified_on              DATE NOT NULL,
    evidence                 VARCHAR,
    notes                    VARCHAR,
    source                   VARCHAR NOT NULL,
    scraped_at               TIMESTAMPTZ NOT NULL,
    content_hash             VARCHAR NOT NULL,
    valid_from               TIMESTAMPTZ NOT NULL,
    valid_to                 TIMESTAMPTZ,
    first_run_id             VARCHAR NOT NULL,
    last_run_id              VARCHAR NOT NULL
);

-- Current scraped rows. verified_on is the day of the last scrape that saw them unchanged.
CREATE VIEW scraped_storage_terms AS
SELECT * EXCLUDE (verified_on, content_hash, valid_from, valid_to, first_run_id, last_run_id),
       CAST(timezone('UTC', scraped_at) AS DATE) AS verified_on, valid_from AS price_since
FROM scraped_storage_term_versions
WHERE valid_to IS NULL;

CREATE VIEW scraped_egress_terms AS
SELECT * EXCLUDE (verified_on, content_hash, valid_from, valid_to, first_run_id, last_run_id),
       CAST(timezone('UTC', scraped_at) AS DATE) AS verified_on, valid_from AS price_since
FROM scraped_egress_term_versions
WHERE valid_to IS NULL;

-- The region whose list prices stand for a provider in the provider-wide terms (the region the
-- providers' own pricing pages quote first). The scraped tables may hold other regions too.
CREATE VIEW terms_reference_regions AS
SELECT * FROM (VALUES ('aws', 'us-east-1'), ('azure', 'eastus')) AS t(provider, region);

CREATE VIEW storage_terms AS
WITH scraped AS (
    SELECT s.* FROM scraped_storage_terms AS s JOIN terms_reference_regions USING (provider, region)
),
template AS (
    -- per scraped row, the reviewed row of its provider and kind it takes its behaviour from
    SELECT s.provider, s.kind, s.product, r.product AS reviewed_product, r.persists_on_stop, r.persists_on_terminate,
           r.billed_while_stopped, r.verified_on, r.source_url,
           -- the quotes behind those three, each naming only the columns taken from it
           list_transform(
               list_filter(string_split(r.evidence, ' || '),
                           lambda x: regexp_matches(x, '^([a-z_]+,)*(persists_on_stop|persists_on_terminate|billed_while_stopped)[a-z_,]*: "')),
               lambda x: array_to_string(list_filter(string_split(regexp_extract(x, '^([a-z_,]+): "', 1), ','),
                                                     lambda c: c IN ('persists_on_stop', 'persists_on_terminate', 'billed_while_stopped')), ',')
                         || substr(x, strpos(x, ': "'))) AS segments
    FROM scraped AS s JOIN reviewed_storage_terms AS r USING (provider, kind)
    QUALIFY row_number() OVER (PARTITION BY s.provider, s.kind, s.product ORDER BY r.product = s.product DESC, r.product) = 1
)
SELECT s.provider, s.kind, s.product, s.usd_per_gb_month, s.usd_per_gb_month_stopped, s.original_currency,
       s.original_price, s.original_unit,
       coalesce(s.persists_on_stop, t.persists_on_stop) AS persists_on_stop,
       coalesce(s.persists_on_terminate, t.persists_on_terminate) AS persists_on_terminate,
       coalesce(s.billed_while_stopped, t.billed_while_stopped) AS billed_while_stopped,
       s.max_size_gb, s.read_throughput_mb_s, s.source_url,
       least(s.verified_on, CASE WHEN len(t.segments) > 0 THEN t.verified_on END) AS verified_on,
       concat_ws(' || ', s.evidence, nullif(array_to_string(t.segments, ' || '), '')) AS evidence,
       concat_ws('; ', s.notes, CASE WHEN len(t.segments) > 0
           THEN 'stop/terminate behaviour from the reviewed row "' || t.reviewed_product || '" <' || t.source_url || '>' END) AS notes,
       s.source AS origin, s.region
FROM scraped AS s
LEFT JOIN template AS t USING (provider, kind, product)
UNION ALL BY NAME
SELECT r.*, 'reviewed' AS origin, CAST(NULL AS VARCHAR) AS region
FROM reviewed_storage_terms AS r
WHERE NOT EXISTS (SELECT 1 FROM scraped AS s WHERE s.provider = r.provider AND s.kind = r.kind);

CREATE VIEW egress_terms AS
WITH scraped AS (
    SELECT s.* FROM scraped_egress_terms AS s JOIN terms_reference_regions USING (provider, region)
),
allowance AS (
    -- the reviewed free allowance of a provider and scope, with the quotes behind it
    SELECT provider, scope, free_allowance_gb_month, verified_on,
           list_transform(
               list_filter(string_split(evidence, ' || '), lambda x: regexp_matches(x, '^([a-z_]+,)*free_allowance_gb_month[a-z_,]*: "')),
               lambda x: 'free_allowance_gb_month' || substr(x, strpos(x, ': "'))) AS segments
    FROM reviewed_egress_terms
    WHERE free_allowance_gb_month IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY provider, scope ORDER BY free_allowance_gb_month DESC, tier) = 1
)
SELECT s.provider, s.scope, s.tier, s.from_gb, s.to_gb, s.usd_per_gb, s.original_price, s.original_unit,
       coalesce(s.free_allowance_gb_month, a.free_allowance_gb_month) AS free_allowance_gb_month,
       s.source_url,
       CASE WHEN s.free_allowance_gb_month IS NULL AND a.free_allowance_gb_month IS NOT NULL
            THEN least(s.verified_on, a.verified_on) ELSE s.verified_on END AS verified_on,
       CASE WHEN s.free_allowance_gb_month IS NULL AND a.free_allowance_gb_month IS NOT NULL
            THEN concat_ws(' || ', s.evidence, nullif(array_to_string(a.segments, ' || '), '')) ELSE s.evidence END AS evidence,
       concat_ws('; ', s.notes, CASE WHEN s.free_allowance_gb_month IS NULL AND a.free_allowance_gb_month IS NOT NULL
           THEN 'free allowance from the reviewed rows' END) AS notes,
       s.source AS origin, s.region
FROM scraped AS s
LEFT JOIN allowance AS a USING (provider, scope)
UNION ALL BY NAME
SELECT r.*, 'reviewed' AS origin, CAST(NULL AS VARCHAR) AS region
FROM reviewed_egress_terms AS r
WHERE NOT EXISTS (SELECT 1 FROM scraped AS s WHERE s.provider = r.provider AND s.scope = r.scope);
