"""What the GPUs, the engine and the host say while a run measures.

`sampler` samples NVML (`nvml`) and the engine's `/metrics` (`engine_metrics`) in background
threads while a load point runs; `host` is the host's fingerprint and the GPU's catalog id.
"""
