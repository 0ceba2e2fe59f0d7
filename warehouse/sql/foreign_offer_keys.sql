-- Offer keys of one provider that another source holds current: a batch may not take them over.
SELECT offer_id, source FROM offer_versions WHERE valid_to IS NULL AND provider = $provider AND source <> $source
