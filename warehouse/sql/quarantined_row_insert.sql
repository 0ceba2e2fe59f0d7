-- One row of a quarantined batch, as validation passed it (JSON of the table's columns).
INSERT INTO quarantined_rows (run_id, table_name, row_json) VALUES ($run_id, $table, $row)
