-- One row of a `gpucat cost` answer into job_costs (read back through latest_job_costs).
INSERT INTO job_costs VALUES (
    $run_at, $model, $method, $training_tokens, $rank, $provider, $offer_id, $instance_type, $region,
    $gpu_model, $gpus, $nodes, $market, $usd_per_hour, $tokens_per_s, $hours, $compute_usd, $storage_usd,
    $egress_usd, $spot_overhead_usd, $total_usd, $availability, $interruption_basis, $expected_interruptions,
    $unknown, $options
)
