"""Holes in the GPU samples while the engine's /metrics answers slowly.

GPU telemetry (NVML) and the /metrics scrape run in separate threads (`bench.telemetry.sampler`), so
a slow scrape must leave no hole in the GPU samples, nor delay the last one. The GPUs are the
tests' STAND-IN NVML (tests/bench/standin_pynvml.py), the server a real HTTP server on
127.0.0.1 whose /metrics waits DELAY before answering (tests/bench). Prints, per delay, the
samples taken, the largest gap between two and how late the last one came after stop().

    .venv/bin/python benchmarks/telemetry_gaps.py            # 10 Hz, 3 s per delay
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "bench"))

from standin_pynvml import StandinGpu, StandinNvml
from test_bench_telemetry_standin_nvml import _SlowMetrics

from infermeter.bench.telemetry.nvml import open_gpus
from infermeter.bench.telemetry.sampler import TelemetrySampler


def main() -> None:
    sys.modules["pynvml"] = StandinNvml([StandinGpu(), StandinGpu()])
    print("delay_ms  samples  max_gap_ms  last_after_stop_ms  scrapes")
    for delay_s in (0.0, 0.2, 0.4, 0.9):
        with _SlowMetrics(delay_s=delay_s) as server:
            gpus, reason = open_gpus(2)
            assert gpus is not None, reason
            sampler = TelemetrySampler(gpus, f"http://127.0.0.1:{server.port}", rate_hz=10)
            sampler.start()
            time.sleep(3.0)
            stopped = time.monotonic_ns()
            sampler.stop()
            gpus.close()
        times = [sample.time_ns for sample in sampler.gpu_samples]
        gap_ms = max((b - a) / 1e6 for a, b in itertools.pairwise(times))
        late_ms = (times[-1] - stopped) / 1e6
        print(
            f"{delay_s * 1000:8.0f}  {len(times):7d}  {gap_ms:10.1f}  {late_ms:18.1f}  "
            f"{len(sampler.engine_samples):7d}"
        )


if __name__ == "__main__":
    main()
