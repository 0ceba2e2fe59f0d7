-- Hold a batch the anomaly checks distrust: its run, source and the reasons, in words.
INSERT INTO quarantines (run_id, source, provider, reasons, quarantined_at)
VALUES ($run_id, $source, $provider, $reasons, $at)
