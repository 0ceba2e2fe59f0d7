-- Rows a parser set aside as out of scope for its source (a CPU-only VM in a price list of every
-- VM size, a non-GPU instance type in the spot feed): counted per run, never stored, never
-- rejected. `rejected_rows` then holds only what could not be trusted or mapped, so an unknown
-- GPU is not buried under noise. rows_fetched does not include them.
-- IF NOT EXISTS (which DuckDB allows only without NOT NULL): a database whose scrape_runs was
-- already rebuilt with this column (migration 007) may apply this one after it.
ALTER TABLE scrape_runs ADD COLUMN IF NOT EXISTS rows_skipped INTEGER DEFAULT 0;
