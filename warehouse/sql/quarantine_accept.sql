-- Mark a quarantined run as loaded by `gpucat accept`, naming the run that loaded it.
UPDATE quarantines SET accepted_at = $at, accepted_run_id = $accepted WHERE run_id = $run_id
