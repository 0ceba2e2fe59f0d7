-- What the time model needs of each accelerator: dense TFLOPS, memory bandwidth, scale-up link.
SELECT gpu_model, family, architecture, bf16_tflops, fp16_tflops, memory_bandwidth_gbps, nvlink_gbps
FROM gpu_models
