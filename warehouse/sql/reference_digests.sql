-- What each reference table was last loaded from, and the checksum of the rows it then held.
SELECT table_name, digest, rows_checksum FROM reference_digests
