-- Why terms figures are NULL: the reviewed rules of some providers (schemas/null_reasons.py). $providers: VARCHAR[].
SELECT * FROM terms_null_reasons WHERE list_contains(CAST($providers AS VARCHAR[]), provider)
