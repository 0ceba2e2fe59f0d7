-- The data and delete files of the lake's current snapshot with the size DuckLake recorded for
-- each, paths made whole: a relative file path is under its table's, a table's under its schema's,
-- a schema's under the lake's data path ($data_path). Read from the lake's own metadata catalog.
WITH tables AS (
    SELECT t.table_id,
           CASE WHEN t.path_is_relative
                THEN (CASE WHEN s.path_is_relative THEN $data_path || s.path ELSE s.path END) || t.path
                ELSE t.path END AS table_path
    FROM __ducklake_metadata_lake.ducklake_table AS t
    JOIN __ducklake_metadata_lake.ducklake_schema AS s
      ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL
    WHERE t.end_snapshot IS NULL
), files AS (
    SELECT table_id, path, path_is_relative, file_size_bytes
    FROM __ducklake_metadata_lake.ducklake_data_file WHERE end_snapshot IS NULL
    UNION ALL
    SELECT table_id, path, path_is_relative, file_size_bytes
    FROM __ducklake_metadata_lake.ducklake_delete_file WHERE end_snapshot IS NULL
)
SELECT CASE WHEN f.path_is_relative THEN tables.table_path || f.path ELSE f.path END AS path,
       f.file_size_bytes
FROM files AS f
JOIN tables USING (table_id)
ORDER BY path
