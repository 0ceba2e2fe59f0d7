-- Versions of a source this load closed before they began (closing sets valid_to = $observed_at):
-- a load that makes any is refused, so no version ever has valid_to < valid_from.
SELECT count(*) FROM {versions} WHERE source = $source AND valid_to = $observed_at AND valid_to < valid_from
