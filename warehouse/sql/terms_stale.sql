-- Terms rows last verified more than $max_age_days days before $today, oldest first.
SELECT provider, 'providers' AS terms_table, provider AS item, verified_on
FROM providers WHERE date_diff('day', verified_on, CAST($today AS DATE)) > $max_age_days
UNION ALL
SELECT provider, 'storage_terms', kind || ': ' || product, verified_on
FROM storage_terms WHERE date_diff('day', verified_on, CAST($today AS DATE)) > $max_age_days
UNION ALL
SELECT provider, 'egress_terms', scope || ' tier ' || tier, verified_on
FROM egress_terms WHERE date_diff('day', verified_on, CAST($today AS DATE)) > $max_age_days
ORDER BY verified_on, provider, terms_table, item
