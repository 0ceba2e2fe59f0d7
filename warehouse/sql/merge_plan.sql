-- A load's plan for the current versions of its source in one versioned table: each one is
-- `seen` (the batch lists the same content: only its last-seen time moves on), `close`d (its
-- content changed, or it is gone from a source whose gone rows just end), `delist`ed (an offer
-- gone from a good batch: closed, and a copy marked unavailable becomes current) or `keep`t
-- (rejected this run but still listed, or already delisted and still absent). The statements
-- that apply it (merge_*.sql) find their rows by rowid, so the table is read once per load.
-- Registered by the load: `staged` (the batch, with content_hash) and `kept` (keys of rows the
-- source still lists that failed validation; {kept} names it, or an empty table when there are
-- none). {versions}, {key_match}, {keys} and {kept}: identifiers from the table contract in code,
-- never user input.
CREATE OR REPLACE TEMP TABLE merge_plan AS
SELECT v.rowid AS version_rowid, v.valid_from, v.content_hash, {keys},
       CASE
           WHEN EXISTS (SELECT 1 FROM staged AS s WHERE {key_match} AND s.content_hash = v.content_hash) THEN 'seen'
           WHEN EXISTS (SELECT 1 FROM {kept} AS s WHERE {key_match}) THEN 'keep'
           WHEN EXISTS (SELECT 1 FROM staged AS s WHERE {key_match}) THEN 'close'
           WHEN v.content_hash LIKE 'delisted:%' THEN 'keep'
           WHEN $delists THEN 'delist'
           ELSE 'close'
       END AS action
FROM {versions} AS v
WHERE v.source = $source AND v.valid_to IS NULL
