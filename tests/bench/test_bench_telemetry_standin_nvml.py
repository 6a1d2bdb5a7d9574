"""GPU telemetry through the STAND-IN NVML (tests/bench/standin_pynvml.py): which GPUs are
read, energy over short windows, and GPU sampling that a slow /metrics does not hold up."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
from aiohttp import web
from standin_pynvml import StandinGpu, install

from infermeter.bench.telemetry.nvml import open_gpus
from infermeter.bench.telemetry.sampler import TelemetrySampler, gpu_window

S = 1_000_000_000
# The "which GPUs are read" tests tell 70 W, 480 W and 550 W apart; 5 % leaves room for a
# sampler thread preempted between its time stamp and the energy read on a loaded CI machine
# (CI saw 70.99 W for 70 W over a 0.12 s window). The energy tests below hold 2 %.
WHICH = 0.05


def _two_gpus_one_serving() -> list[StandinGpu]:
    idle = StandinGpu(memory_used_bytes=600 * 2**20, utilization_pct=0)
    idle.set_power(70.0)
    serving = StandinGpu(memory_used_bytes=70 * 2**30, utilization_pct=97, processes=[4242])
    serving.set_power(480.0)
    return [idle, serving]


def _sampled_power_w(indices: list[int] | None = None, count: int | None = None) -> float:
    gpus, reason = open_gpus(count, indices)
    assert gpus is not None, reason
    try:
        sampler = TelemetrySampler(gpus, rate_hz=50)
        sampler.start()
        time.sleep(0.3)
        sampler.stop()
    finally:
        gpus.close()
    samples = sampler.gpu_samples
    window = gpu_window(samples, samples[0].time_ns, samples[-1].time_ns)
    assert window is not None
    assert window.power_w_mean is not None
    return window.power_w_mean


def test_standin_nvml_gpu_indices_sample_only_the_servers_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nvml = install(monkeypatch, _two_gpus_one_serving())
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert _sampled_power_w(indices=[1]) == pytest.approx(480.0, rel=WHICH)  # not 550 W
    gpus, _ = open_gpus(None, [1])
    assert gpus is not None
    assert gpus.inventory.indices == (1,)
    assert gpus.inventory.visible_count == 2
    gpus.close()
    assert nvml.initialised == 0  # every nvmlInit was shut down


def test_standin_nvml_cuda_visible_devices_names_the_servers_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpus_ = _two_gpus_one_serving()
    install(monkeypatch, gpus_)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", gpus_[1].uuid)
    assert _sampled_power_w() == pytest.approx(480.0, rel=WHICH)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert _sampled_power_w() == pytest.approx(480.0, rel=WHICH)


def test_standin_nvml_without_a_hint_samples_the_busy_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, _two_gpus_one_serving())
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert _sampled_power_w() == pytest.approx(480.0, rel=WHICH)


def test_standin_nvml_several_idle_gpus_and_no_hint_give_no_telemetry_and_say_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(monkeypatch, [StandinGpu(), StandinGpu()])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    gpus, reason = open_gpus()
    assert gpus is None
    assert reason is not None
    assert "--gpu-indices" in reason


def test_standin_nvml_a_launched_servers_count_takes_the_first_gpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(monkeypatch, _two_gpus_one_serving())
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert _sampled_power_w(count=1) == pytest.approx(70.0, rel=WHICH)
    assert _sampled_power_w(count=2) == pytest.approx(550.0, rel=WHICH)


def test_standin_nvml_gpu_index_out_of_range_is_a_reason_not_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(monkeypatch, _two_gpus_one_serving())
    gpus, reason = open_gpus(None, [5])
    assert gpus is None
    assert reason is not None
    assert "--gpu-indices 5" in reason
    assert "0..1" in reason


def test_standin_nvml_energy_of_a_short_window_matches_its_power(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (gpu,) = install(monkeypatch, [StandinGpu()]).gpus
    gpu.set_power(400.0)
    gpus, _ = open_gpus(1)
    assert gpus is not None
    sampler = TelemetrySampler(gpus, rate_hz=10)
    sampler.start()
    time.sleep(0.15)
    start = time.monotonic_ns()
    time.sleep(0.3)  # a 0.3 s point, shorter than three sampling intervals
    end = time.monotonic_ns()
    time.sleep(0.05)
    sampler.stop()
    gpus.close()
    window = gpu_window(sampler.gpu_samples, start, end)
    assert window is not None
    assert window.energy_j == pytest.approx(400.0 * (end - start) / S, rel=0.02)
    assert window.power_w_mean == pytest.approx(400.0, rel=0.02)


def test_standin_nvml_without_energy_counter_integrates_power(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (gpu,) = install(monkeypatch, [StandinGpu(has_energy_counter=False)]).gpus
    gpu.set_power(250.0)
    gpus, _ = open_gpus(1)
    assert gpus is not None
    sampler = TelemetrySampler(gpus, rate_hz=20)
    sampler.start()
    start = time.monotonic_ns()
    time.sleep(0.2)
    end = time.monotonic_ns()
    sampler.stop()
    gpus.close()
    window = gpu_window(sampler.gpu_samples, start, end)
    assert window is not None
    assert window.energy_j == pytest.approx(250.0 * (end - start) / S, rel=0.02)


class _SlowMetrics:
    """A real HTTP server whose /metrics takes `delay_s` to answer."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.port = 0
        self.scrapes = 0
        self.windows: list[tuple[int, int]] = []  # each scrape: received, answered (monotonic)
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _metrics(self, request: web.Request) -> web.Response:
        self.scrapes += 1
        received = time.monotonic_ns()
        await asyncio.sleep(self.delay_s)
        self.windows.append((received, time.monotonic_ns()))
        return web.Response(text="vllm:num_requests_running 1.0\n")

    async def _main(self) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        while not self._stop.is_set():
            await asyncio.sleep(0.02)
        await runner.cleanup()

    def __enter__(self) -> _SlowMetrics:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture
def slow_metrics() -> Iterator[_SlowMetrics]:
    with _SlowMetrics(delay_s=0.4) as server:
        yield server


def test_standin_nvml_gpu_samples_have_no_hole_while_metrics_scrapes_are_slow(
    monkeypatch: pytest.MonkeyPatch, slow_metrics: _SlowMetrics
) -> None:
    install(monkeypatch, [StandinGpu()])
    gpus, _ = open_gpus(1)
    assert gpus is not None
    # 10 Hz: the engine is scraped every 0.5 s, and each scrape takes 0.4 s to answer.
    sampler = TelemetrySampler(gpus, f"http://127.0.0.1:{slow_metrics.port}", rate_hz=10)
    sampler.start()
    time.sleep(1.2)  # stop while a scrape is waiting for its answer
    stopped = time.monotonic_ns()
    sampler.stop()
    gpus.close()
    times = [sample.time_ns for sample in sampler.gpu_samples]
    assert slow_metrics.scrapes >= 2
    assert len(times) >= 6  # 10 Hz for 1.2 s (ticks a loaded machine misses are skipped)
    # A scrape takes 0.4 s; it must not stall the GPU samples: GPU samples were taken while
    # each answered scrape waited (about 4 at 10 Hz; none if a scrape held the sampler). Read
    # from the server's own times, not a wall-clock bound a loaded machine can miss.
    answered = slow_metrics.windows
    assert answered
    for received, sent in answered:
        assert any(received < time_ns < sent for time_ns in times), (received, sent, times)
    # Nor may a scrape still waiting delay the last sample: it comes before that answer.
    waiting = [sent for received, sent in answered if received <= stopped < sent]
    if waiting:
        assert times[-1] < waiting[0]
