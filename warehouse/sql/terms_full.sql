-- Every column of the providers' terms rows, for `gpucat providers --json`. $providers: VARCHAR[].
SELECT * FROM providers WHERE list_contains(CAST($providers AS VARCHAR[]), provider) ORDER BY provider
