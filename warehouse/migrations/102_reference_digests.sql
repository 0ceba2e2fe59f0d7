-- What each reference table was last loaded from: a digest of its file, of the code that
-- validates it and of the schema version, and a checksum of the rows it then held. A refresh
-- validates and rewrites a reference table only when either changed (warehouse/db.py
-- load_changed_reference): a new file, new code, or rows edited by hand.
CREATE TABLE reference_digests (
    table_name VARCHAR NOT NULL,
    digest     VARCHAR NOT NULL,
    rows_checksum VARCHAR NOT NULL,
    loaded_at  TIMESTAMPTZ NOT NULL
);
