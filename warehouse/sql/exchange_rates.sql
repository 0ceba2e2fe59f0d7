-- The latest loaded rate of every currency: what normalization converts prices with.
SELECT currency, usd_per_unit, rate_date, source, source_url, scraped_at
FROM exchange_rates
QUALIFY row_number() OVER (PARTITION BY currency ORDER BY rate_date DESC, scraped_at DESC) = 1
ORDER BY currency;
