-- A run's rejected rows (registered by the load as `rejected_frame`).
INSERT INTO rejected_rows BY NAME SELECT * FROM rejected_frame
