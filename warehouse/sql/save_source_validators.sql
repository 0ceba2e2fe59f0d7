-- Store the validators of successful loads (registered as `validators_frame`, one row per source).
INSERT OR REPLACE INTO source_validators
    (source, method, url, request_body_sha256, etag, last_modified, version, requests, code_version, run_id, recorded_at)
SELECT source, method, url, request_body_sha256, etag, last_modified, version, requests, code_version, run_id, now()
FROM validators_frame
