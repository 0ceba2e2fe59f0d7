-- Rows a parser set aside as out of scope for its source (a CPU-only VM in a price list of every
-- VM size, a non-GPU instance type in the spot feed): counted per run, never stored, never
-- rejected. `rejected_rows` then holds only what could not be trusted or mapped, so an unknown
-- GPU is not buried under noise. rows_fetched does not include them.
ALTER TABLE scrape_runs ADD COLUMN rows_skipped INTEGER NOT NULL DEFAULT 0;
