-- A scraped disk's rate while its instance is stopped (issue 25).
--
-- Price lists state one rate per GB-month; the providers' own docs say whether a stopped
-- instance's disk keeps being charged it. A reviewed row says so by naming
-- `usd_per_gb_month_stopped` in the quote behind its billed_while_stopped (AWS: "charged by the
-- amount of GB you provision per month until you release the storage"; GCP: persistent disks
-- "will continue to be charged until they are deleted"; ...). The `storage_terms` view then gives
-- each scraped row of that provider and kind its own price as its stopped rate, with that quote,
-- exactly as it takes persists_on_stop / persists_on_terminate / billed_while_stopped from the
-- reviewed row (migration 070). A provider whose quote says nothing of the rate (or whose
-- stopped rate differs, e.g. RunPod's volume disk) keeps the stopped rate NULL.

CREATE OR REPLACE VIEW storage_terms AS
WITH scraped AS (
    SELECT s.* FROM scraped_storage_terms AS s JOIN terms_reference_regions USING (provider, region)
),
template AS (
    -- per scraped row, the reviewed row of its provider and kind it takes its behaviour from
    SELECT s.provider, s.kind, s.product, r.product AS reviewed_product, r.persists_on_stop, r.persists_on_terminate,
           r.billed_while_stopped, r.verified_on, r.source_url,
           -- the quotes behind those three and the stopped rate, each naming only the columns taken from it
           list_transform(
               list_filter(string_split(r.evidence, ' || '),
                           lambda x: regexp_matches(x, '^([a-z_]+,)*(persists_on_stop|persists_on_terminate|billed_while_stopped|usd_per_gb_month_stopped)[a-z_,]*: "')),
               lambda x: array_to_string(list_filter(string_split(regexp_extract(x, '^([a-z_,]+): "', 1), ','),
                                                     lambda c: c IN ('persists_on_stop', 'persists_on_terminate', 'billed_while_stopped', 'usd_per_gb_month_stopped')), ',')
                         || substr(x, strpos(x, ': "'))) AS segments
    FROM scraped AS s JOIN reviewed_storage_terms AS r USING (provider, kind)
    QUALIFY row_number() OVER (PARTITION BY s.provider, s.kind, s.product ORDER BY r.product = s.product DESC, r.product) = 1
),
merged AS (
    SELECT s.*, t.reviewed_product, t.segments, t.verified_on AS reviewed_verified_on, t.source_url AS reviewed_url,
           coalesce(s.persists_on_stop, t.persists_on_stop) AS m_persists_on_stop,
           coalesce(s.persists_on_terminate, t.persists_on_terminate) AS m_persists_on_terminate,
           coalesce(s.billed_while_stopped, t.billed_while_stopped) AS m_billed_while_stopped,
           -- the reviewed quote names the stopped rate: a stopped instance's disk is charged its rate
           len(list_filter(t.segments, lambda x: regexp_matches(x, '^([a-z_]+,)*usd_per_gb_month_stopped[a-z_,]*: "'))) > 0
               AS stopped_at_own_rate
    FROM scraped AS s
    LEFT JOIN template AS t USING (provider, kind, product)
)
SELECT provider, kind, product, usd_per_gb_month,
       coalesce(usd_per_gb_month_stopped,
                CASE WHEN stopped_at_own_rate AND m_billed_while_stopped THEN usd_per_gb_month END) AS usd_per_gb_month_stopped,
       original_currency, original_price, original_unit,
       m_persists_on_stop AS persists_on_stop,
       m_persists_on_terminate AS persists_on_terminate,
       m_billed_while_stopped AS billed_while_stopped,
       max_size_gb, read_throughput_mb_s, source_url,
       least(verified_on, CASE WHEN len(segments) > 0 THEN reviewed_verified_on END) AS verified_on,
       concat_ws(' || ', evidence, nullif(array_to_string(segments, ' || '), '')) AS evidence,
       concat_ws('; ', notes, CASE WHEN len(segments) > 0
           THEN 'stop/terminate behaviour from the reviewed row "' || reviewed_product || '" <' || reviewed_url || '>' END,
           CASE WHEN stopped_at_own_rate AND m_billed_while_stopped AND usd_per_gb_month_stopped IS NULL AND usd_per_gb_month IS NOT NULL
           THEN 'stopped rate = its own rate: the reviewed row''s quote says a stopped instance''s disk keeps being charged' END) AS notes,
       source AS origin, region
FROM merged
UNION ALL BY NAME
SELECT r.*, 'reviewed' AS origin, CAST(NULL AS VARCHAR) AS region
FROM reviewed_storage_terms AS r
WHERE NOT EXISTS (SELECT 1 FROM scraped AS s WHERE s.provider = r.provider AND s.kind = r.kind);
