"""GPU telemetry from NVML, sampled in a background thread while a load point runs.

`open_gpus` finds the GPUs the deployment uses: the first `count` of those CUDA would show
(`CUDA_VISIBLE_DEVICES` as indices or UUIDs, else all, in NVML's order). NVML comes from
`nvidia-ml-py` (extra `bench`), imported on first use. When it is not installed, or there is no
NVIDIA driver or GPU, there is simply no telemetry: `open_gpus` returns None and a reason to
show, never an error.

`TelemetrySampler` reads every GPU `rate_hz` times a second (10 by default): utilization, memory
used, power, the energy counter, SM clock and temperature; and, when given an engine URL, the
engine's `/metrics` every `engine_every` GPU ticks (see `bench.engine_metrics`). `gpu_window`
aggregates the samples that fall inside a point's measured window (first measured send to last
measured end, on the same monotonic clock as the client):
- utilization and SM clock: mean over samples and GPUs; power: mean of the GPUs' summed draw;
- memory: the highest on any one GPU; temperature: the highest seen;
- energy: per GPU, the energy counter's (nvmlDeviceGetTotalEnergyConsumption) increase between
  the first and last sample of the window, summed over GPUs; where a GPU has no counter, its
  mean power × the time between those samples.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.engine_metrics import MetricsSample, scrape_metrics

NS_PER_S = 1_000_000_000
NVML_MISSING = "nvidia-ml-py is not installed: pip install 'infermeter[bench]'"


@dataclass(frozen=True)
class GpuReading:
    """One GPU at one instant; None where NVML does not support the reading."""

    gpu: int
    utilization_pct: float | None
    memory_used_bytes: int | None
    power_w: float | None
    energy_mj: int | None
    sm_clock_mhz: float | None
    temperature_c: float | None


@dataclass(frozen=True)
class GpuSample:
    """Every GPU's reading at one monotonic time."""

    time_ns: int
    readings: tuple[GpuReading, ...]


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


@dataclass(frozen=True)
class GpuInfo:
    """What the driver says about one GPU."""

    index: int
    name: str
    memory_total_bytes: int | None


@dataclass(frozen=True)
class GpuInventory:
    """The GPUs the deployment uses and the driver's versions."""

    gpus: tuple[GpuInfo, ...]
    visible_count: int
    driver: str | None
    cuda: str | None


def _nvml() -> Any:
    import pynvml

    return pynvml


def _maybe(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)`, or None where NVML does not support it on this GPU."""
    try:
        return function(*args)
    except Exception:  # pynvml raises NVMLError subclasses per unsupported call
        return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlGpus:
    """The deployment's GPUs through NVML (already initialised); `close()` shuts NVML down."""

    def __init__(self, nvml: Any, handles: list[Any], inventory: GpuInventory) -> None:
        self._nvml = nvml
        self._handles = handles
        self.inventory = inventory

    def read(self) -> GpuSample:
        """Every GPU's current readings."""
        nvml = self._nvml
        readings = []
        for index, handle in enumerate(self._handles):
            rates = _maybe(nvml.nvmlDeviceGetUtilizationRates, handle)
            utilization = rates.gpu if rates is not None else None
            memory_info = _maybe(nvml.nvmlDeviceGetMemoryInfo, handle)
            memory = memory_info.used if memory_info is not None else None
            power_mw = _maybe(nvml.nvmlDeviceGetPowerUsage, handle)
            energy = _maybe(nvml.nvmlDeviceGetTotalEnergyConsumption, handle)
            clock = _maybe(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)
            temperature = _maybe(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
            readings.append(
                GpuReading(
                    gpu=index,
                    utilization_pct=float(utilization) if utilization is not None else None,
                    memory_used_bytes=int(memory) if memory is not None else None,
                    power_w=float(power_mw) / 1000 if power_mw is not None else None,
                    energy_mj=int(energy) if energy is not None else None,
                    sm_clock_mhz=float(clock) if clock is not None else None,
                    temperature_c=float(temperature) if temperature is not None else None,
                )
            )
        return GpuSample(time.monotonic_ns(), tuple(readings))

    def close(self) -> None:
        """Shut NVML down (once)."""
        if self._handles:
            self._handles = []
            with contextlib.suppress(Exception):
                self._nvml.nvmlShutdown()


def _visible_handles(nvml: Any) -> list[Any]:
    count = int(nvml.nvmlDeviceGetCount())
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None or not visible.strip():
        return [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    handles = []
    for item in (part.strip() for part in visible.split(",")):
        if item.isdigit() and int(item) < count:
            handles.append(nvml.nvmlDeviceGetHandleByIndex(int(item)))
        elif item.startswith(("GPU-", "MIG-")):
            handle = _maybe(nvml.nvmlDeviceGetHandleByUUID, item)
            if handle is not None:
                handles.append(handle)
        else:
            break  # CUDA stops at the first invalid entry too
    return handles


def open_gpus(count: int | None = None) -> tuple[NvmlGpus | None, str | None]:
    """NVML access to the first `count` visible GPUs (all when None), or None and why not."""
    try:
        nvml = _nvml()
    except ImportError:
        return None, NVML_MISSING
    try:
        nvml.nvmlInit()
    except Exception as error:
        return None, f"no NVIDIA driver or GPU (NVML: {error})"
    try:
        handles = _visible_handles(nvml)
        if not handles:
            nvml.nvmlShutdown()
            return None, "NVML sees no GPU"
        used = handles[:count] if count is not None else handles
        gpus = []
        for index, handle in enumerate(used):
            memory_info = _maybe(nvml.nvmlDeviceGetMemoryInfo, handle)
            total = int(memory_info.total) if memory_info is not None else None
            gpus.append(GpuInfo(index, _text(nvml.nvmlDeviceGetName(handle)), total))
        driver_text = _maybe(nvml.nvmlSystemGetDriverVersion)
        driver = _text(driver_text) if driver_text is not None else None
        cuda_number = _maybe(nvml.nvmlSystemGetCudaDriverVersion)
        cuda = f"{cuda_number // 1000}.{cuda_number % 1000 // 10}" if cuda_number else None
        inventory = GpuInventory(tuple(gpus), len(handles), driver, cuda)
    except Exception as error:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
        return None, f"NVML failed: {error}"
    return NvmlGpus(nvml, used, inventory), None


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def gpu_window(samples: Sequence[GpuSample], start_ns: int, end_ns: int) -> GpuWindow | None:
    """Aggregate the samples inside [start_ns, end_ns] (all samples when fewer than two fall
    inside: a window shorter than two ticks); None without samples."""
    inside = [s for s in samples if start_ns <= s.time_ns <= end_ns]
    if len(inside) < 2:
        inside = list(samples)
    if not inside:
        return None
    readings = [r for sample in inside for r in sample.readings]
    utilization = [r.utilization_pct for r in readings if r.utilization_pct is not None]
    memory = [r.memory_used_bytes for r in readings if r.memory_used_bytes is not None]
    clocks = [r.sm_clock_mhz for r in readings if r.sm_clock_mhz is not None]
    temperatures = [r.temperature_c for r in readings if r.temperature_c is not None]
    power_totals = [
        math.fsum(r.power_w for r in sample.readings if r.power_w is not None)
        for sample in inside
        if any(r.power_w is not None for r in sample.readings)
    ]
    return GpuWindow(
        samples=len(inside),
        gpu_utilization_pct_mean=_mean(utilization),
        memory_used_bytes_max=max(memory) if memory else None,
        power_w_mean=_mean(power_totals),
        energy_j=_energy_j(inside),
        sm_clock_mhz_mean=_mean(clocks),
        temperature_c_max=max(temperatures) if temperatures else None,
    )


def _energy_j(samples: Sequence[GpuSample]) -> float | None:
    if len(samples) < 2:
        return None
    first, last = samples[0], samples[-1]
    elapsed_s = (last.time_ns - first.time_ns) / NS_PER_S
    total = 0.0
    for gpu, (start, end) in enumerate(zip(first.readings, last.readings, strict=True)):
        if start.energy_mj is not None and end.energy_mj is not None:
            total += max(end.energy_mj - start.energy_mj, 0) / 1000
            continue
        powers = [s.readings[gpu].power_w for s in samples if s.readings[gpu].power_w is not None]
        if not powers:
            return None
        total += math.fsum(p for p in powers if p is not None) / len(powers) * elapsed_s
    return total


@dataclass
class TelemetrySampler:
    """Samples GPUs (and the engine's /metrics) in a daemon thread between start() and stop()."""

    gpus: NvmlGpus | None
    engine_url: str | None = None
    rate_hz: float = 10.0
    engine_every: int = 5
    gpu_samples: list[GpuSample] = field(default_factory=list)
    engine_samples: list[MetricsSample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        """Clear earlier samples and start sampling."""
        self.gpu_samples = []
        self.engine_samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="telemetry", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling and wait for the thread (its last read included)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(10)
            self._thread = None

    def _run(self) -> None:
        interval_s = 1.0 / self.rate_hz
        tick = 0
        next_ns = time.monotonic_ns()
        while True:
            if self.gpus is not None:
                with contextlib.suppress(Exception):
                    self.gpu_samples.append(self.gpus.read())
            if self.engine_url is not None and tick % self.engine_every == 0:
                sample = scrape_metrics(self.engine_url, timeout_s=interval_s * self.engine_every)
                if sample is not None:
                    self.engine_samples.append(sample)
            tick += 1
            next_ns += int(interval_s * NS_PER_S)
            wait_s = max(next_ns - time.monotonic_ns(), 0) / NS_PER_S
            if self._stop.wait(wait_s):
                return
