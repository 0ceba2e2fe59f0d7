-- The conditional-fetch tokens of every source's last successful run (one read before a refresh fetches).
SELECT source, method, url, request_body_sha256, etag, last_modified, version, requests, code_version
FROM source_validators
