-- Currency: exchange rates as a scraped table, and the rate date on every converted offer.
-- Rates are USD per unit of a currency on the publisher's date (a publisher quoting rates
-- against another base currency has them turned into USD per unit by its parser). History works as for offers:
-- one row per distinct content; the current version of each (currency, rate_date) has
-- valid_to NULL, and a new day's file closes the previous day's rows.
CREATE TABLE exchange_rate_versions (
    currency      VARCHAR NOT NULL,
    usd_per_unit  DOUBLE NOT NULL,
    rate_date     DATE NOT NULL,
    source        VARCHAR NOT NULL,
    source_url    VARCHAR NOT NULL,
    scraped_at    TIMESTAMPTZ NOT NULL,
    content_hash  VARCHAR NOT NULL,
    valid_from    TIMESTAMPTZ NOT NULL,
    valid_to      TIMESTAMPTZ,
    first_run_id  VARCHAR NOT NULL,
    last_run_id   VARCHAR NOT NULL
);

CREATE VIEW exchange_rates AS
SELECT currency, usd_per_unit, rate_date, source, source_url, scraped_at
FROM exchange_rate_versions
WHERE valid_to IS NULL;

-- NULL for offers quoted in USD; otherwise the rate_date of the rate the USD columns used.
ALTER TABLE offer_versions ADD COLUMN fx_rate_date DATE;

-- Every offer_versions column but the versioning ones, so a column a migration adds to
-- offer_versions reaches the view without restating its list.
CREATE OR REPLACE VIEW current_offers AS
SELECT * EXCLUDE (content_hash, valid_from, valid_to, first_run_id, last_run_id), valid_from AS price_since
FROM offer_versions
WHERE valid_to IS NULL;
