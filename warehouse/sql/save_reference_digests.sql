-- Record what a reference table was just loaded from and the checksum of its rows (one row per
-- table, replaced: MERGE, since a lake cannot declare the PRIMARY KEY that INSERT OR REPLACE needs).
MERGE INTO reference_digests AS t
USING (SELECT CAST($table_name AS VARCHAR) AS table_name, CAST($digest AS VARCHAR) AS digest,
              CAST($rows_checksum AS VARCHAR) AS rows_checksum, now() AS loaded_at) AS s
ON t.table_name = s.table_name
WHEN MATCHED THEN UPDATE SET digest = s.digest, rows_checksum = s.rows_checksum, loaded_at = s.loaded_at
WHEN NOT MATCHED THEN INSERT BY NAME
