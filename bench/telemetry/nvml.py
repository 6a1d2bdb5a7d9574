"""The GPUs a deployment uses, read through NVML (`nvidia-ml-py`, extra `bench`).

`open_gpus` picks the GPUs whose telemetry a run records, in this order of preference:
1. `indices`: NVML device indices, as `nvidia-smi` numbers them (`bench run --gpu-indices`);
2. `CUDA_VISIBLE_DEVICES` (indices or UUIDs): the devices CUDA shows a server started with it;
   the first `count` of them when `count` is given (a launched vLLM uses the first
   tensor × pipeline × data-parallel devices it sees);
3. without either, the first `count` devices when `count` is given (a launched server);
4. otherwise (`--endpoint` without a hint) the only GPU, or the GPUs that run a compute process
   (`nvmlDeviceGetComputeRunningProcesses`); with several GPUs and none busy there is no
   telemetry and the reason says to pass `--gpu-indices`, because summing every GPU's power
   would charge idle GPUs to the server.

NVML is imported on first use; without it, or without an NVIDIA driver or GPU, there is simply
no telemetry: `open_gpus` returns None and a reason to show, never an error.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.plural import counted

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
    """Every sampled GPU's reading at one monotonic time."""

    time_ns: int
    readings: tuple[GpuReading, ...]


@dataclass(frozen=True)
class GpuInfo:
    """What the driver says about one GPU; `index` is its NVML (nvidia-smi) index."""

    index: int
    name: str
    memory_total_bytes: int | None


@dataclass(frozen=True)
class GpuInventory:
    """The GPUs sampled (`gpus`, NVML indices in `index`), how many the host has, and the
    driver's versions."""

    gpus: tuple[GpuInfo, ...]
    visible_count: int
    driver: str | None
    cuda: str | None

    @property
    def indices(self) -> tuple[int, ...]:
        """NVML indices of the sampled GPUs."""
        return tuple(gpu.index for gpu in self.gpus)


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
    """The sampled GPUs through NVML (already initialised); `close()` shuts NVML down."""

    def __init__(self, nvml: Any, handles: list[Any], inventory: GpuInventory) -> None:
        self._nvml = nvml
        self._handles = handles
        self.inventory = inventory

    def read(self) -> GpuSample:
        """Every sampled GPU's current readings (`gpu` is its position among them)."""
        nvml = self._nvml
        # The energy counters first, next to the time stamp: the window's energy is
        # interpolated on these times, so a delay between the two would skew a short point.
        now_ns = time.monotonic_ns()
        energies = [
            _maybe(nvml.nvmlDeviceGetTotalEnergyConsumption, handle) for handle in self._handles
        ]
        readings = []
        for position, (handle, energy) in enumerate(zip(self._handles, energies, strict=True)):
            rates = _maybe(nvml.nvmlDeviceGetUtilizationRates, handle)
            utilization = rates.gpu if rates is not None else None
            memory_info = _maybe(nvml.nvmlDeviceGetMemoryInfo, handle)
            memory = memory_info.used if memory_info is not None else None
            power_mw = _maybe(nvml.nvmlDeviceGetPowerUsage, handle)
            clock = _maybe(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)
            temperature = _maybe(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
            readings.append(
                GpuReading(
                    gpu=position,
                    utilization_pct=float(utilization) if utilization is not None else None,
                    memory_used_bytes=int(memory) if memory is not None else None,
                    power_w=float(power_mw) / 1000 if power_mw is not None else None,
                    energy_mj=int(energy) if energy is not None else None,
                    sm_clock_mhz=float(clock) if clock is not None else None,
                    temperature_c=float(temperature) if temperature is not None else None,
                )
            )
        return GpuSample(now_ns, tuple(readings))

    def close(self) -> None:
        """Shut NVML down (once)."""
        if self._handles:
            self._handles = []
            with contextlib.suppress(Exception):
                self._nvml.nvmlShutdown()


def _cuda_visible(nvml: Any, count: int, visible: str) -> list[int]:
    """NVML indices of the devices `CUDA_VISIBLE_DEVICES=visible` shows, in its order."""
    indices: list[int] = []
    for item in (part.strip() for part in visible.split(",")):
        if item.isdigit() and int(item) < count:
            indices.append(int(item))
        elif item.startswith(("GPU-", "MIG-")):
            handle = _maybe(nvml.nvmlDeviceGetHandleByUUID, item)
            index = _maybe(nvml.nvmlDeviceGetIndex, handle) if handle is not None else None
            if index is not None:
                indices.append(int(index))
        else:
            break  # CUDA stops at the first invalid entry too
    return indices


def _busy(nvml: Any, count: int) -> list[int]:
    """NVML indices of the GPUs that run at least one compute process."""
    busy = []
    for index in range(count):
        processes = _maybe(
            nvml.nvmlDeviceGetComputeRunningProcesses, nvml.nvmlDeviceGetHandleByIndex(index)
        )
        if processes:
            busy.append(index)
    return busy


class _NoGpu(Exception):
    """No GPU to sample; the message says why."""


def _choose(
    nvml: Any, device_count: int, count: int | None, indices: Sequence[int] | None
) -> list[int]:
    if device_count == 0:
        raise _NoGpu("NVML sees no GPU")
    if indices is not None:
        missing = [index for index in indices if not 0 <= index < device_count]
        if missing:
            raise _NoGpu(
                f"--gpu-indices {','.join(map(str, missing))}: this host has GPUs "
                f"0..{device_count - 1}"
            )
        return list(indices)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip():
        chosen = _cuda_visible(nvml, device_count, visible)
        if not chosen:
            raise _NoGpu(f"CUDA_VISIBLE_DEVICES={visible!r} names no GPU NVML sees")
        return chosen[:count] if count is not None else chosen
    if count is not None:
        return list(range(min(count, device_count)))
    if device_count == 1:
        return [0]
    busy = _busy(nvml, device_count)
    if busy:
        return busy
    raise _NoGpu(
        f"this host has {counted(device_count, 'GPU')} and none runs a compute process; name the "
        "server's with --gpu-indices (or CUDA_VISIBLE_DEVICES)"
    )


def open_gpus(
    count: int | None = None, indices: Sequence[int] | None = None
) -> tuple[NvmlGpus | None, str | None]:
    """NVML access to the deployment's GPUs (see the module docstring), or None and why not."""
    try:
        nvml = _nvml()
    except ImportError:
        return None, NVML_MISSING
    try:
        nvml.nvmlInit()
    except Exception as error:
        return None, f"no NVIDIA driver or GPU (NVML: {error})"
    try:
        device_count = int(nvml.nvmlDeviceGetCount())
        chosen = _choose(nvml, device_count, count, indices)
        handles = [nvml.nvmlDeviceGetHandleByIndex(index) for index in chosen]
        gpus = []
        for index, handle in zip(chosen, handles, strict=True):
            memory_info = _maybe(nvml.nvmlDeviceGetMemoryInfo, handle)
            total = int(memory_info.total) if memory_info is not None else None
            gpus.append(GpuInfo(index, _text(nvml.nvmlDeviceGetName(handle)), total))
        driver_text = _maybe(nvml.nvmlSystemGetDriverVersion)
        driver = _text(driver_text) if driver_text is not None else None
        cuda_number = _maybe(nvml.nvmlSystemGetCudaDriverVersion)
        cuda = f"{cuda_number // 1000}.{cuda_number % 1000 // 10}" if cuda_number else None
        inventory = GpuInventory(tuple(gpus), device_count, driver, cuda)
    except _NoGpu as reason:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
        return None, str(reason)
    except Exception as error:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
        return None, f"NVML failed: {error}"
    return NvmlGpus(nvml, handles, inventory), None
