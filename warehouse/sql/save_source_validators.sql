INSERT OR REPLACE INTO source_validators
    (source, method, url, request_body_sha256, etag, last_modified, version, requests, code_version, run_id, recorded_at)
VALUES ($source, $method, $url, $request_body_sha256, $etag, $last_modified, $version, $requests, $code_version, $run_id, now())
