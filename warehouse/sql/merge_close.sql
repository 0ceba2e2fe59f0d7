-- The plan's changed and delisted versions end at this batch's time. {versions}: from code.
UPDATE {versions}
SET valid_to = $observed_at
WHERE rowid IN (SELECT version_rowid FROM merge_plan WHERE action IN ('close', 'delist'))
