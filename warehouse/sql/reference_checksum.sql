-- One reference table's rows, summed up: its row count and the sum of its rows' hashes (order-free).
-- {table} is a name from the caller's list in code; the per-table queries are joined by UNION ALL.
SELECT CAST($table_name AS VARCHAR) AS table_name, count(*) || ':' || coalesce(CAST(sum(hash(t)) AS VARCHAR), '0') AS rows_checksum FROM {table} AS t
