-- The storage_terms rows of some providers. $providers: VARCHAR[].
SELECT * FROM storage_terms WHERE list_contains(CAST($providers AS VARCHAR[]), provider) ORDER BY provider, kind, product
