-- A quarantined run's rows and its rejected rows (their offers keep their versions on accept).
SELECT table_name, NULL AS reasons, row_json FROM quarantined_rows WHERE run_id = $run_id
UNION ALL
SELECT table_name, reasons, row_json FROM rejected_rows WHERE run_id = $run_id
