-- Whether a source has any current version in a versioned table ({versions}: from code, never user input).
SELECT EXISTS (SELECT 1 FROM {versions} WHERE source = $source AND valid_to IS NULL)
