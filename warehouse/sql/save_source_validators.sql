-- One row per source: replace its validators. MERGE rather than INSERT OR REPLACE, which needs
-- the PRIMARY KEY a DuckLake warehouse cannot declare (warehouse/lake.py).
MERGE INTO source_validators AS t
USING (
    SELECT $source AS source, $method AS method, $url AS url, $request_body_sha256 AS request_body_sha256,
           $etag AS etag, $last_modified AS last_modified, $version AS version, $requests AS requests,
           $code_version AS code_version, $run_id AS run_id, now() AS recorded_at
) AS s
ON t.source = s.source
WHEN MATCHED THEN UPDATE SET
    method = s.method, url = s.url, request_body_sha256 = s.request_body_sha256, etag = s.etag,
    last_modified = s.last_modified, version = s.version, requests = s.requests,
    code_version = s.code_version, run_id = s.run_id, recorded_at = s.recorded_at
WHEN NOT MATCHED THEN INSERT BY NAME
