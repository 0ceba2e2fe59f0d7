-- Published spot interruption bands (table interruption_rates) for Linux instances.
SELECT provider, region, instance_type, interruption_band, band_lower_pct, band_upper_pct
FROM interruption_rates
WHERE os = 'Linux'
