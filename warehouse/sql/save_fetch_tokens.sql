-- Store the conditional-fetch tokens of successful loads (registered as `tokens_frame`, one row per source):
-- each source's row replaced. MERGE rather than INSERT OR REPLACE, which needs the PRIMARY KEY a
-- DuckLake warehouse cannot declare (warehouse/lake_schema.py).
MERGE INTO source_validators AS t
USING (
    SELECT source, method, url, request_body_sha256, etag, last_modified, version, requests, code_version, run_id,
           now() AS recorded_at
    FROM tokens_frame
) AS s
ON t.source = s.source
WHEN MATCHED THEN UPDATE SET
    method = s.method, url = s.url, request_body_sha256 = s.request_body_sha256, etag = s.etag,
    last_modified = s.last_modified, version = s.version, requests = s.requests,
    code_version = s.code_version, run_id = s.run_id, recorded_at = s.recorded_at
WHEN NOT MATCHED THEN INSERT BY NAME
