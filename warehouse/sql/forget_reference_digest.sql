-- A reference table loaded from rows of unknown origin: the next refresh reloads it from its file.
DELETE FROM reference_digests WHERE table_name = $table_name
