-- Conditional fetch: per source, what its last successful run saw, so the next run can ask the
-- provider "changed since?" and skip the download and the parse when the answer is no
-- (scrapers/conditional.py says when each kind of evidence is used).
CREATE TABLE source_validators (
    source              VARCHAR PRIMARY KEY,
    method              VARCHAR NOT NULL,    -- the run's first request
    url                 VARCHAR NOT NULL,    -- redacted, as in captures
    request_body_sha256 VARCHAR,
    etag                VARCHAR,             -- its ETag response header, sent back as If-None-Match
    last_modified       VARCHAR,             -- its Last-Modified, sent back as If-Modified-Since
    version             VARCHAR,             -- the provider's own version (AWS: its versioned file URLs)
    requests            INTEGER NOT NULL,    -- requests the run made; HTTP validators only when 1
    code_version        VARCHAR NOT NULL,    -- hash of the parsers and reference data that loaded it
    run_id              VARCHAR NOT NULL,    -- the scrape_runs row whose data they vouch for
    recorded_at         TIMESTAMPTZ NOT NULL
);
