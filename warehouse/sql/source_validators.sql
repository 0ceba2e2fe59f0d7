-- The validators of a source's last successful run.
SELECT method, url, request_body_sha256, etag, last_modified, version, requests, code_version
FROM source_validators
WHERE source = $source
