-- Node-to-node bandwidth (Gbit/s per instance) of current offers, for the time model of
-- multi-node configurations (fit's rows carry the fabric's name, not its speed).
SELECT provider, offer_id, fabric_gbps
FROM current_offers
WHERE fabric_gbps IS NOT NULL
