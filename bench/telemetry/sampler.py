"""GPU and engine telemetry, sampled in background threads while a load point runs.

`TelemetrySampler` reads the deployment's GPUs (`bench.telemetry.nvml`) `rate_hz` times a second (10
by default): utilization, memory used, power, the energy counter, SM clock and temperature; and,
when given an engine URL, the engine's `/metrics` every `engine_every` GPU ticks (see
`bench.telemetry.engine_metrics`). The two run in separate threads, so a slow `/metrics` answer
never leaves a hole in the GPU samples. `start()` takes the first GPU sample before it returns and
`stop()` a last one, so the samples cover the whole point.

`gpu_window` aggregates them over a point's measured window [start, end] (first measured send
to last measured end, on the same monotonic clock as the client), using the samples inside it
and the nearest one on each side:
- energy: per GPU, the energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ) interpolated
  linearly to the window's start and end and differenced, so it covers exactly the window however
  short the point; where a GPU has no counter, its power readings integrated over the window
  (trapezoids, interpolated at the ends); summed over GPUs. When the samples do not cover the
  window (a GPU read failed), energy is absent and `energy_missing_reason` says why;
- power: the mean draw of all GPUs together over the window, energy / window length (for the
  counter that is the exact mean; the readings themselves are averages over the driver's own
  period, up to a second, so for a short point they describe the preceding second too);
  without energy, the mean of the samples' summed draw;
- utilization and SM clock: mean over samples and GPUs; memory: the highest on any one GPU;
  temperature: the highest seen.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from infermeter.bench.telemetry.engine_metrics import MetricsSample, scrape_metrics
from infermeter.bench.telemetry.nvml import GpuReading, GpuSample, NvmlGpus
from infermeter.calculators.units import NS_PER_S


@dataclass(frozen=True)
class GpuWindow:
    """GPU telemetry aggregated over one measured window (see the module docstring)."""

    samples: int
    gpu_utilization_pct_mean: float | None
    memory_used_bytes_max: int | None
    power_w_mean: float | None
    energy_j: float | None
    sm_clock_mhz_mean: float | None
    temperature_c_max: float | None
    energy_missing_reason: str | None = None


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _covering(samples: Sequence[GpuSample], start_ns: int, end_ns: int) -> list[GpuSample]:
    """The samples inside [start_ns, end_ns] and the nearest one on each side."""
    ordered = sorted(samples, key=lambda sample: sample.time_ns)
    before = [i for i, s in enumerate(ordered) if s.time_ns <= start_ns]
    after = [i for i, s in enumerate(ordered) if s.time_ns >= end_ns]
    first = before[-1] if before else 0
    last = after[0] if after else len(ordered) - 1
    return ordered[first : last + 1]


Value = Callable[[GpuReading], float | None]


def _series(samples: Sequence[GpuSample], gpu: int, value: Value) -> list[tuple[int, float]]:
    points = []
    for sample in samples:
        if gpu < len(sample.readings):
            reading = value(sample.readings[gpu])
            if reading is not None:
                points.append((sample.time_ns, reading))
    return points


def _at(series: Sequence[tuple[int, float]], time_ns: int) -> float | None:
    """The series interpolated linearly at `time_ns`; None outside it."""
    for (t0, v0), (t1, v1) in itertools.pairwise(series):
        if t0 <= time_ns <= t1:
            return v0 if t1 == t0 else v0 + (v1 - v0) * (time_ns - t0) / (t1 - t0)
    if series and series[0][0] == time_ns:
        return series[0][1]
    return None


def _integral_j(power: Sequence[tuple[int, float]], start_ns: int, end_ns: int) -> float | None:
    """Watts integrated over [start_ns, end_ns] by trapezoids, in joules."""
    at_start, at_end = _at(power, start_ns), _at(power, end_ns)
    if at_start is None or at_end is None:
        return None
    inside = [(t, w) for t, w in power if start_ns < t < end_ns]
    points = [(start_ns, at_start), *inside, (end_ns, at_end)]
    return math.fsum(
        (t1 - t0) / NS_PER_S * (w0 + w1) / 2 for (t0, w0), (t1, w1) in itertools.pairwise(points)
    )


def _window_energy_j(
    samples: Sequence[GpuSample], start_ns: int, end_ns: int
) -> tuple[float | None, str | None]:
    """Energy of every GPU together over exactly [start_ns, end_ns], or None and why."""
    if end_ns <= start_ns:
        return None, "the measured window has no length"
    gpus = max(len(sample.readings) for sample in samples)
    total = 0.0
    for gpu in range(gpus):
        counter = _series(samples, gpu, lambda r: r.energy_mj)
        if counter:
            first, last = _at(counter, start_ns), _at(counter, end_ns)
            if first is None or last is None:
                return None, "the energy counter's samples do not cover the measured window"
            total += max(last - first, 0.0) / 1000
            continue
        integral = _integral_j(_series(samples, gpu, lambda r: r.power_w), start_ns, end_ns)
        if integral is None:
            return None, "the power samples do not cover the measured window"
        total += integral
    return total, None


def gpu_window(samples: Sequence[GpuSample], start_ns: int, end_ns: int) -> GpuWindow | None:
    """Aggregate the samples over [start_ns, end_ns] (see the module docstring); None
    without samples."""
    if not samples:
        return None
    used = _covering(samples, start_ns, end_ns)
    readings = [r for sample in used for r in sample.readings]
    utilization = [r.utilization_pct for r in readings if r.utilization_pct is not None]
    memory = [r.memory_used_bytes for r in readings if r.memory_used_bytes is not None]
    clocks = [r.sm_clock_mhz for r in readings if r.sm_clock_mhz is not None]
    temperatures = [r.temperature_c for r in readings if r.temperature_c is not None]
    energy_j, reason = _window_energy_j(used, start_ns, end_ns)
    if energy_j is not None:
        power_w_mean: float | None = energy_j / ((end_ns - start_ns) / NS_PER_S)
    else:
        power_w_mean = _mean(
            [
                math.fsum(r.power_w for r in sample.readings if r.power_w is not None)
                for sample in used
                if any(r.power_w is not None for r in sample.readings)
            ]
        )
    return GpuWindow(
        samples=len(used),
        gpu_utilization_pct_mean=_mean(utilization),
        memory_used_bytes_max=max(memory) if memory else None,
        power_w_mean=power_w_mean,
        energy_j=energy_j,
        sm_clock_mhz_mean=_mean(clocks),
        temperature_c_max=max(temperatures) if temperatures else None,
        energy_missing_reason=reason,
    )


@dataclass
class TelemetrySampler:
    """Samples GPUs and the engine's /metrics, each in its own daemon thread, between
    start() and stop()."""

    gpus: NvmlGpus | None
    engine_url: str | None = None
    rate_hz: float = 10.0
    engine_every: int = 5
    gpu_samples: list[GpuSample] = field(default_factory=list)
    engine_samples: list[MetricsSample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        """Clear earlier samples, take the first GPU sample, and start sampling."""
        self.gpu_samples = []
        self.engine_samples = []
        self._stop = threading.Event()
        self._threads = []
        if self.gpus is not None:
            self._read_gpus()
            self._threads.append(threading.Thread(target=self._run_gpus, name="telemetry-gpu"))
        if self.engine_url is not None:
            self._threads.append(threading.Thread(target=self._run_engine, name="telemetry-engine"))
        for thread in self._threads:
            thread.daemon = True
            thread.start()

    def stop(self) -> None:
        """Stop sampling, take a last GPU sample, and wait for the threads (the GPU thread's
        end first: a scrape still waiting for /metrics must not delay the last sample)."""
        if not self._threads:
            return
        self._stop.set()
        gpu_threads = [t for t in self._threads if t.name == "telemetry-gpu"]
        for thread in gpu_threads:
            thread.join(10)
        if self.gpus is not None:
            self._read_gpus()
        for thread in self._threads:
            thread.join(10)
        self._threads = []

    def _read_gpus(self) -> None:
        assert self.gpus is not None
        with contextlib.suppress(Exception):
            self.gpu_samples.append(self.gpus.read())

    def _every(self, interval_s: float, action: Callable[[], None]) -> None:
        """`action` every `interval_s` on the monotonic clock until stopped; a late action
        skips the ticks it missed instead of bunching them."""
        interval_ns = int(interval_s * NS_PER_S)
        next_ns = time.monotonic_ns()
        while True:
            next_ns += interval_ns
            now = time.monotonic_ns()
            if next_ns < now:
                next_ns = now + interval_ns - (now - next_ns) % interval_ns
            if self._stop.wait((next_ns - now) / NS_PER_S):
                return
            action()

    def _run_gpus(self) -> None:
        self._every(1.0 / self.rate_hz, self._read_gpus)

    def _run_engine(self) -> None:
        assert self.engine_url is not None
        url = self.engine_url
        interval_s = self.engine_every / self.rate_hz

        def scrape() -> None:
            sample = scrape_metrics(url, timeout_s=interval_s)
            if sample is not None:
                self.engine_samples.append(sample)

        scrape()
        self._every(interval_s, scrape)
