-- A load of a source that holds no current version of the table (load.Burst.holds): merge_plan.sql
-- would find nothing, so every staged row becomes a current version, as merge_insert.sql would
-- insert it, read straight from the batch's Parquet file ($staged). {versions}, {columns},
-- {staged_columns}: identifiers from code.
INSERT INTO {versions} ({columns}, content_hash, valid_from, valid_to, first_run_id, last_run_id)
SELECT {staged_columns}, s.content_hash, s.scraped_at, NULL, $run_id, $run_id
FROM read_parquet($staged) AS s
