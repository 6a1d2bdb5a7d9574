"""GPU telemetry aggregation, NVML absence, vLLM /metrics differencing and the host fingerprint."""

from __future__ import annotations

import sys
import time

import pytest

from infermeter.bench.telemetry.engine_metrics import MetricsSample, engine_window, parse_prometheus
from infermeter.bench.telemetry.host import catalog_gpu_id, host_info
from infermeter.bench.telemetry.nvml import NVML_MISSING, GpuReading, GpuSample, open_gpus
from infermeter.bench.telemetry.sampler import TelemetrySampler, gpu_window
from infermeter.registry.catalog import gpu_of_driver_name, load_gpus

S = 1_000_000_000


def _reading(gpu: int, utilization: float, power_w: float, energy_mj: int | None) -> GpuReading:
    return GpuReading(gpu, utilization, 10 * 2**30, power_w, energy_mj, 1800.0, 60.0 + gpu)


def test_gpu_window_aggregates_inside_the_window_and_differences_energy() -> None:
    samples = [
        GpuSample(
            t * S,
            (_reading(0, 50.0 + t, 300.0, 300_000 * t), _reading(1, 70.0, 200.0, 200_000 * t)),
        )
        for t in range(0, 11)
    ]
    window = gpu_window(samples, start_ns=2 * S, end_ns=6 * S)
    assert window is not None
    assert window.samples == 5
    # GPU 0 at 52..56 % and GPU 1 at 70 %: mean over samples and GPUs.
    assert window.gpu_utilization_pct_mean == pytest.approx((54 * 5 + 70 * 5) / 10)
    assert window.energy_j == pytest.approx(2000.0)  # the counters: (300 + 200) J/s over 4 s
    assert window.power_w_mean == pytest.approx(500.0)  # the GPUs' draw summed
    assert window.temperature_c_max == 61.0
    assert window.memory_used_bytes_max == 10 * 2**30


def test_gpu_window_integrates_power_where_there_is_no_energy_counter() -> None:
    samples = [GpuSample(t * S, (_reading(0, 90.0, 250.0, None),)) for t in range(5)]
    window = gpu_window(samples, 0, 4 * S)
    assert window is not None
    assert window.energy_j == pytest.approx(1000.0)  # 250 W over 4 s


def test_gpu_window_energy_covers_exactly_a_window_between_two_samples() -> None:
    # Samples a second apart; the point lasted 0.7 s between two of them. Its energy is the
    # counter interpolated to the window's ends, not the whole span of the samples.
    samples = [GpuSample(t * S, (_reading(0, 90.0, 300.0, 300_000 * t),)) for t in range(10)]
    window = gpu_window(samples, start_ns=int(2.5 * S), end_ns=int(3.2 * S))
    assert window is not None
    assert window.energy_j == pytest.approx(210.0)  # 300 W × 0.7 s
    assert window.power_w_mean == pytest.approx(300.0)
    assert window.energy_missing_reason is None


def test_gpu_window_energy_is_absent_with_a_reason_when_samples_miss_the_window() -> None:
    samples = [GpuSample(t * S, (_reading(0, 90.0, 300.0, 300_000 * t),)) for t in range(3)]
    window = gpu_window(samples, start_ns=1 * S, end_ns=5 * S)  # the samples end at 2 s
    assert window is not None
    assert window.energy_j is None
    assert window.energy_missing_reason is not None
    assert "cover" in window.energy_missing_reason


def test_gpu_window_without_samples_is_none() -> None:
    assert gpu_window([], 0, S) is None


def test_open_gpus_without_a_gpu_is_absent_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    gpus, reason = open_gpus()
    if gpus is not None:
        gpus.close()
        pytest.skip("this host has an NVIDIA GPU")
    assert reason is not None
    assert reason  # shown to the user as "no GPU telemetry: <reason>"


def test_open_gpus_without_nvidia_ml_py_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    gpus, reason = open_gpus()
    assert gpus is None
    assert reason == NVML_MISSING
    assert "infermeter[bench]" in reason


def test_telemetry_sampler_without_gpu_or_engine_collects_nothing() -> None:
    sampler = TelemetrySampler(None, engine_url=None, rate_hz=50)
    sampler.start()
    time.sleep(0.05)
    sampler.stop()
    assert sampler.gpu_samples == []
    assert sampler.engine_samples == []


METRICS = """\
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.75
vllm:num_preemptions_total{engine="0",model_name="m"} 7.0
vllm:num_preemptions_total{engine="1",model_name="m"} 3.0
vllm:request_queue_time_seconds_bucket{engine="0",le="0.3",model_name="m"} 4.0
vllm:request_queue_time_seconds_sum{engine="0",model_name="m"} 0.5
vllm:request_queue_time_seconds_count{engine="0",model_name="m"} 4.0
process_cpu_seconds_total 12.5
"""


def test_parse_prometheus_sums_counters_and_averages_kv_usage() -> None:
    values = parse_prometheus(METRICS)
    assert values["vllm:kv_cache_usage_perc"] == 0.5
    assert values["vllm:num_preemptions_total"] == 10.0
    assert values["vllm:request_queue_time_seconds_count"] == 4.0
    assert "vllm:request_queue_time_seconds_bucket" not in values
    assert values["process_cpu_seconds_total"] == 12.5


def test_engine_window_differences_counters_and_reads_older_names() -> None:
    before = MetricsSample(
        0,
        {
            "vllm:num_preemptions_total": 2.0,
            "vllm:gpu_prefix_cache_queries_total": 1000.0,
            "vllm:gpu_prefix_cache_hits_total": 100.0,
            "vllm:request_queue_time_seconds_sum": 1.0,
            "vllm:request_queue_time_seconds_count": 10.0,
        },
    )
    after = MetricsSample(
        10 * S,
        {
            "vllm:num_preemptions_total": 5.0,
            "vllm:gpu_prefix_cache_queries_total": 3000.0,
            "vllm:gpu_prefix_cache_hits_total": 600.0,
            "vllm:request_queue_time_seconds_sum": 1.2,
            "vllm:request_queue_time_seconds_count": 20.0,
        },
    )
    during = [
        MetricsSample(t * S, {"vllm:gpu_cache_usage_perc": usage})
        for t, usage in ((1, 0.9), (2, 0.2), (3, 0.4), (9, 0.99))
    ]
    window = engine_window(before, after, during, start_ns=2 * S, end_ns=3 * S)
    assert window is not None
    assert window.preemptions == 3
    assert window.prefix_cache_hit_rate == pytest.approx(0.25)
    assert window.queued_requests == 10
    assert window.queue_ms_mean == pytest.approx(20.0)
    assert window.kv_cache_usage_pct_mean == pytest.approx(30.0)  # samples inside only
    assert window.kv_cache_usage_pct_max == pytest.approx(40.0)


def test_engine_window_of_a_server_without_vllm_metrics_is_none() -> None:
    other = MetricsSample(0, {"process_cpu_seconds_total": 1.0})
    assert engine_window(other, other, [other], 0, S) is None


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA H100 NVL", "h100-nvl"),
        ("NVIDIA H200", "h200-sxm"),
        ("NVIDIA H200 NVL", "h200-nvl"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
        ("NVIDIA A100-SXM4-40GB", "a100-40gb-sxm"),
        ("NVIDIA A100-PCIE-40GB", "a100-40gb-pcie"),
        ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie"),
        ("NVIDIA A100-PCIE-80GB", "a100-80gb-pcie"),
        ("NVIDIA A40", "a40"),
        ("NVIDIA A10", "a10"),
        ("NVIDIA L40", "l40"),
        ("NVIDIA B300 SXM6 AC", "b300"),
        ("NVIDIA GB200", "gb200"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"),
        ("AMD Instinct MI300X", "mi300x"),
        ("NVIDIA L40S", "l40s"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA A10G", "a10g"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
        ("NVIDIA RTX A6000", "rtx-a6000"),
        ("NVIDIA B200", "b200"),
        ("NVIDIA GH200 480GB", None),
        ("Tesla T4", None),
    ],
)
def test_catalog_gpu_id_maps_driver_names(name: str, gpu_id: str | None) -> None:
    # Each name is found by one catalog entry's driver_name_pattern, or by none.
    assert catalog_gpu_id(name) == gpu_id


def test_a_gpu_added_to_the_catalog_alone_is_recognised_by_its_driver_name() -> None:
    # The driver's name is a fact of the GPU's catalog entry (driver_name_pattern), not a map
    # in code: an entry, and nothing else, makes `bench run` recognise the GPU without --gpu.
    gpus = load_gpus()
    a40 = gpus["a40"].model_copy(update={"id": "a40-copy", "driver_name_pattern": r"\bA40X\b"})
    assert gpu_of_driver_name({**gpus, a40.id: a40}, "NVIDIA A40X") is a40
    assert gpu_of_driver_name({**gpus, a40.id: a40}, "NVIDIA A40") is gpus["a40"]
    assert gpu_of_driver_name({**gpus, "a40-copy": gpus["a40"]}, "NVIDIA A40") is None  # twice


def test_host_info_without_gpu_still_describes_the_machine() -> None:
    info = host_info(None, vllm_version="0.9.1")
    assert info.gpu_sku is None
    assert info.vllm_version == "0.9.1"
    assert info.os
    assert info.ram_bytes is not None
    assert info.ram_bytes > 0


@pytest.mark.gpu
def test_open_gpus_samples_a_real_gpu_at_10_hz() -> None:
    gpus, reason = open_gpus(1)
    if gpus is None:
        pytest.skip(f"needs an NVIDIA GPU: {reason}")
    try:
        sampler = TelemetrySampler(gpus, rate_hz=10)
        start = time.monotonic_ns()
        sampler.start()
        time.sleep(1.05)
        sampler.stop()
        window = gpu_window(sampler.gpu_samples, start, time.monotonic_ns())
    finally:
        gpus.close()
    assert len(sampler.gpu_samples) >= 10
    assert window is not None
    assert window.memory_used_bytes_max is not None
    assert window.power_w_mean is not None
    assert window.energy_j is not None
    assert catalog_gpu_id(gpus.inventory.gpus[0].name) is not None or gpus.inventory.gpus[0].name
