-- More machine-readable terms sources (gcp-terms, verda-terms, cudo-terms, tensordock-terms,
-- ovh-terms) and why a terms figure is NULL.
--
-- Each new source's reference region: the region whose scraped prices stand for the provider in
-- the provider-wide `storage_terms` / `egress_terms` views (migration 070's precedence rule).
-- gcp: us-central1, the region GCP's pricing pages quote first; verda and ovh price every
-- location alike (`global`); cudo: no-luster-1 and tensordock: Austin, the locations their
-- public samples (gpuhunt's Cudo test, TensorDock's API docs example) show first.
CREATE OR REPLACE VIEW terms_reference_regions AS
SELECT * FROM (VALUES
    ('aws', 'us-east-1'), ('azure', 'eastus'), ('gcp', 'us-central1'), ('verda', 'global'), ('ovh', 'global'),
    ('cudo', 'no-luster-1'), ('tensordock', 'Austin, Texas, United States')
) AS t(provider, region);

-- Why a NULL terms figure is NULL (reference data: schemas/reference/terms/null_reasons.csv,
-- schemas/null_reasons.py): not_published (reference_url: the page that should state it),
-- not_found (searches: where it was looked for) or not_applicable. `item` is a storage product,
-- an egress scope or '*'; `columns` figure columns, space separated, or '*'.
CREATE TABLE terms_null_reasons (
    provider      VARCHAR NOT NULL,
    "table"       VARCHAR NOT NULL,
    item          VARCHAR NOT NULL,
    columns       VARCHAR NOT NULL,
    reason        VARCHAR NOT NULL,
    reference_url VARCHAR,
    searches      VARCHAR,
    verified_on   DATE NOT NULL,
    notes         VARCHAR
);
