-- Every loaded rate of every currency, one per (currency, day): normalization converts each
-- offer with the rate of its own day, or the nearest earlier one (scrapers/normalize.py).
SELECT currency, usd_per_unit, rate_date, source, source_url, scraped_at
FROM exchange_rates
QUALIFY row_number() OVER (PARTITION BY currency, rate_date ORDER BY scraped_at DESC) = 1
ORDER BY currency, rate_date;
