"""The host fingerprint of a result, and the catalog id of the GPU that NVML names.

Every part is best effort: what cannot be read is None, never an error. Versions of vLLM and
PyTorch come from the installed distributions (`importlib.metadata`), or from the server's
`/version` for vLLM when infermeter launched it from another environment.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any

from infermeter.bench.telemetry.nvml import GpuInventory
from infermeter.registry.builder import unchecked
from infermeter.registry.catalog import gpu_of_driver_name, load_gpus
from infermeter.registry.models.provenance import ClientHost, Host


def catalog_gpu_id(name: str) -> str | None:
    """The GPU catalog id of a GPU the driver names `name`, when the name says it plainly (the
    catalog's `driver_name_pattern`s)."""
    gpu = gpu_of_driver_name(load_gpus(), name)
    return None if gpu is None else gpu.id


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def cpu_model() -> str | None:
    """The CPU's model name (Linux /proc/cpuinfo, else the platform's processor string)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip() or None
    except OSError:
        pass
    return platform.processor() or None


def ram_bytes() -> int | None:
    """Total physical memory in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def os_description() -> str:
    """Distribution name (from /etc/os-release) and kernel, e.g. `Ubuntu 22.04.4 LTS (Linux …)`."""
    kernel = f"{platform.system()} {platform.release()}"
    try:
        release = platform.freedesktop_os_release()
    except OSError:
        return kernel
    pretty = release.get("PRETTY_NAME") or release.get("NAME")
    return f"{pretty} ({kernel})" if pretty else kernel


def host_info(
    inventory: GpuInventory | None,
    vllm_version: str | None = None,
    *,
    this_machine: bool = True,
    own_environment: bool = True,
) -> Host:
    """The fingerprint of the engine's host; `vllm_version` (from the server) wins over the
    installed. `this_machine`: the engine runs here (else CPU, memory and OS are unknown);
    `own_environment`: in this Python environment (else its installed versions are not the
    engine's). Built `unchecked`: without NVML the GPU's name and count are
    None here, and `bench.result.provenance` states them before the result is checked."""
    installed_vllm = _distribution_version("vllm") if own_environment else None
    read: dict[str, Any] = {  # the GPU's name and count may be None: unchecked
        "gpu_sku": inventory.gpus[0].name if inventory else None,
        "gpu_count": inventory.visible_count if inventory else None,
        "driver": inventory.driver if inventory else None,
        "cuda": inventory.cuda if inventory else None,
        "cpu": cpu_model() if this_machine else None,
        "ram_bytes": ram_bytes() if this_machine else None,
        "os": os_description() if this_machine else None,
        "vllm_version": vllm_version or installed_vllm,
        "torch_version": _distribution_version("torch") if own_environment else None,
        "telemetry_gpu_indices": list(inventory.indices) if inventory else None,
    }
    return unchecked(Host, **read)


def client_info() -> ClientHost:
    """This machine, as the load generator's host."""
    return ClientHost(
        cpu=cpu_model(),
        ram_bytes=ram_bytes(),
        os=os_description(),
        python_version=platform.python_version(),
    )
