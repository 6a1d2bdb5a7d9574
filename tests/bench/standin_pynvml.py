"""A STAND-IN for `pynvml` (nvidia-ml-py): it is not NVML and reads no GPU.

It implements the NVML calls infermeter makes, with nvidia-ml-py's names, argument order,
units and errors, over simulated GPUs (`StandinGpu`) whose counters behave like a driver's:
- power in mW (`nvmlDeviceGetPowerUsage`), the draw the test sets, changeable at any time;
- energy in mJ since the "driver loaded" (`nvmlDeviceGetTotalEnergyConsumption`): the exact
  integral of that draw over the monotonic clock, so it only ever grows;
- utilization (`.gpu`, `.memory` percent), memory (`.total`, `.free`, `.used` bytes), SM clock
  MHz, temperature °C, compute processes, name, UUID, per device index;
- `nvmlInit` is reference-counted as NVML's is; any device call before it (or after the last
  `nvmlShutdown`) raises `NVMLError_Uninitialized`, a bad index `NVMLError_InvalidArgument`, an
  unknown UUID `NVMLError_NotFound`, a reading a GPU lacks `NVMLError_NotSupported`.

`install(monkeypatch, gpus)` puts it in `sys.modules["pynvml"]`, where `bench.telemetry.nvml`
imports it.
"""

from __future__ import annotations

import sys
import threading
import time
import types
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
MIB = 1024 * 1024


class NVMLError(Exception):
    """nvidia-ml-py's error: `value` is the NVML return code."""

    _strings: ClassVar[dict[int, str]] = {
        NVML_ERROR_UNINITIALIZED: "Uninitialized",
        NVML_ERROR_INVALID_ARGUMENT: "Invalid Argument",
        NVML_ERROR_NOT_SUPPORTED: "Not Supported",
        NVML_ERROR_NOT_FOUND: "Not Found",
    }

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return self._strings.get(self.value, "Unknown Error")


class NVMLError_Uninitialized(NVMLError):
    def __init__(self) -> None:
        super().__init__(NVML_ERROR_UNINITIALIZED)


class NVMLError_InvalidArgument(NVMLError):
    def __init__(self) -> None:
        super().__init__(NVML_ERROR_INVALID_ARGUMENT)


class NVMLError_NotSupported(NVMLError):
    def __init__(self) -> None:
        super().__init__(NVML_ERROR_NOT_SUPPORTED)


class NVMLError_NotFound(NVMLError):
    def __init__(self) -> None:
        super().__init__(NVML_ERROR_NOT_FOUND)


@dataclass
class StandinGpu:
    """One simulated GPU; set `power_w` (or call `set_power`) while a test runs."""

    name: str = "NVIDIA H100 80GB HBM3"
    uuid: str = ""
    memory_total_bytes: int = 81_559 * MIB
    memory_used_bytes: int = 0
    utilization_pct: int = 0
    sm_clock_mhz: int = 1980
    temperature_c: int = 35
    has_energy_counter: bool = True
    processes: list[int] = field(default_factory=list)
    energy_at_boot_mj: int = 7_000_000_000
    reads: int = 0
    _power_w: float = 70.0
    _since_ns: int = field(default_factory=time.monotonic_ns)
    _energy_mj: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set_power(self, watts: float) -> None:
        """From now on the GPU draws `watts` (the energy so far stays counted)."""
        with self._lock:
            self._advance()
            self._power_w = watts

    def energy_mj(self) -> int:
        with self._lock:
            self._advance()
            return self.energy_at_boot_mj + int(self._energy_mj)

    def _advance(self) -> None:
        now = time.monotonic_ns()
        self._energy_mj += self._power_w * (now - self._since_ns) / 1e6  # W × ms = mJ
        self._since_ns = now


@dataclass(frozen=True)
class _Handle:
    index: int


class _Memory:
    def __init__(self, gpu: StandinGpu) -> None:
        self.total = gpu.memory_total_bytes
        self.used = gpu.memory_used_bytes
        self.free = gpu.memory_total_bytes - gpu.memory_used_bytes


class _Utilization:
    def __init__(self, gpu: StandinGpu) -> None:
        self.gpu = gpu.utilization_pct
        self.memory = gpu.utilization_pct // 2


class _Process:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.usedGpuMemory = 1024 * MIB


class StandinNvml(types.ModuleType):
    """The `pynvml` module over `gpus`; `initialised` counts nvmlInit minus nvmlShutdown."""

    def __init__(self, gpus: list[StandinGpu], driver: str = "570.124.06", cuda: int = 12080):
        super().__init__("pynvml")
        for index, gpu in enumerate(gpus):
            if not gpu.uuid:
                gpu.uuid = f"GPU-5fa1c0de-0000-4000-8000-{index:012d}"
        self.gpus = gpus
        self.driver = driver
        self.cuda = cuda
        self.initialised = 0
        self.NVML_TEMPERATURE_GPU = NVML_TEMPERATURE_GPU
        self.NVML_CLOCK_SM = NVML_CLOCK_SM
        self.NVMLError = NVMLError
        self.NVMLError_Uninitialized = NVMLError_Uninitialized
        self.NVMLError_InvalidArgument = NVMLError_InvalidArgument
        self.NVMLError_NotSupported = NVMLError_NotSupported
        self.NVMLError_NotFound = NVMLError_NotFound

    def _gpu(self, handle: Any) -> StandinGpu:
        self._check()
        if not isinstance(handle, _Handle):
            raise NVMLError_InvalidArgument()
        gpu = self.gpus[handle.index]
        gpu.reads += 1
        return gpu

    def _check(self) -> None:
        if self.initialised <= 0:
            raise NVMLError_Uninitialized()

    def nvmlInit(self) -> None:
        self.initialised += 1

    def nvmlShutdown(self) -> None:
        self._check()
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        self._check()
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        self._check()
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:
        self._check()
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> _Handle:
        self._check()
        if not 0 <= index < len(self.gpus):
            raise NVMLError_InvalidArgument()
        return _Handle(index)

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> _Handle:
        self._check()
        for index, gpu in enumerate(self.gpus):
            if gpu.uuid == uuid:
                return _Handle(index)
        raise NVMLError_NotFound()

    def nvmlDeviceGetIndex(self, handle: Any) -> int:
        self._gpu(handle)
        index: int = handle.index
        return index

    def nvmlDeviceGetName(self, handle: Any) -> str:
        return self._gpu(handle).name

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return self._gpu(handle).uuid

    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> _Memory:
        return _Memory(self._gpu(handle))

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> _Utilization:
        return _Utilization(self._gpu(handle))

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        gpu = self._gpu(handle)
        return round(gpu._power_w * 1000)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int:
        gpu = self._gpu(handle)
        if not gpu.has_energy_counter:
            raise NVMLError_NotSupported()  # pre-Volta GPUs have no energy counter
        return gpu.energy_mj()

    def nvmlDeviceGetClockInfo(self, handle: Any, clock_type: int) -> int:
        gpu = self._gpu(handle)
        if clock_type != NVML_CLOCK_SM:
            raise NVMLError_InvalidArgument()
        return gpu.sm_clock_mhz

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: int) -> int:
        gpu = self._gpu(handle)
        if sensor != NVML_TEMPERATURE_GPU:
            raise NVMLError_InvalidArgument()
        return gpu.temperature_c

    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[_Process]:
        return [_Process(pid) for pid in self._gpu(handle).processes]


def install(monkeypatch: pytest.MonkeyPatch, gpus: list[StandinGpu], **kwargs: Any) -> StandinNvml:
    """Make `import pynvml` return a stand-in over `gpus` for the rest of the test."""
    module = StandinNvml(gpus, **kwargs)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    return module
