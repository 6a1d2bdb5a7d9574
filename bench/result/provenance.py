"""Who and what measured a run, when, and on which host: the result file's `source`.

`Provenance` is what the session knows; `measured_source` states it as the result's
`MeasuredSource` (built unchecked: the result's builder validates it), with the
tool's version and, from a checkout, its git commit (`tool_version`, `tool_commit`). Without
NVML the host's GPU is the catalog GPU given with `--gpu` (`gpu_sku` says so).
`default_submitter` and `engine_host` fill in who measured and the engine's host.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import getpass
import importlib.metadata
import subprocess
from dataclasses import dataclass
from pathlib import Path

from infermeter.bench.launch.engines import ServerFacts
from infermeter.bench.result.deployment import Deployment
from infermeter.bench.telemetry.host import host_info
from infermeter.bench.telemetry.nvml import GpuInventory
from infermeter.registry.builder import unchecked
from infermeter.registry.models.common import CPU_DEVICE_ID
from infermeter.registry.models.provenance import (
    ClientHost,
    Host,
    MeasuredSource,
    ServerReport,
    Tool,
)

TOOL_NAME = "infermeter"
_CODE_ROOT = Path(__file__).resolve().parents[2]
"""The folder the package's code sits in: a checkout for an editable install, else
site-packages (the commit is then unknown, the version says what ran)."""


@dataclass(frozen=True)
class Provenance:
    """Who and what measured, when, and on which host."""

    command: str
    started_at: dt.datetime
    finished_at: dt.datetime
    submitter: str
    host: Host
    server_command: str | None = None
    client: ClientHost | None = None
    server: ServerFacts | None = None


def tool_commit() -> str | None:
    """The git commit infermeter runs from, when it runs from a checkout."""
    if not (_CODE_ROOT / ".git").exists():
        return None
    try:
        completed = subprocess.run(
            ["git", "-C", str(_CODE_ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = completed.stdout.strip()
    return commit if completed.returncode == 0 and commit else None


def tool_version() -> str:
    """infermeter's installed version."""
    try:
        return importlib.metadata.version(TOOL_NAME)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def _timestamp(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(dt.UTC).replace(microsecond=0)


def cpu_gpu_sku(cpu: str | None) -> str:
    """What a result's `source.host.gpu_sku` says of a run given `--gpu cpu` (`cpu`: the
    CPU's model, where known)."""
    on = f" ({cpu})" if cpu else ""
    return f"none: the engine ran on the CPU{on}, as given with --gpu cpu"


def _host(host: Host, deployment: Deployment) -> Host:
    """The engine host's fingerprint, its GPU stated from the deployment where NVML read none."""
    gpu = deployment.gpu
    if gpu.id == CPU_DEVICE_ID:
        gpu_sku = cpu_gpu_sku(host.cpu)
    else:
        gpu_sku = host.gpu_sku or f"{gpu.id} (given with --gpu; no NVIDIA driver read)"
    gpu_count = host.gpu_count or gpu.gpus_per_node or gpu.count
    stated = {"gpu_sku": gpu_sku, "gpu_count": gpu_count, "form_factor": gpu.form_factor}
    return host.model_copy(update=stated)


def _server(facts: ServerFacts | None) -> ServerReport | None:
    if facts is None:
        return None
    return unchecked(
        ServerReport, **dataclasses.asdict(facts) | {"read_from": list(facts.read_from)}
    )


def measured_source(
    provenance: Provenance, deployment: Deployment, complete: bool
) -> MeasuredSource:
    """The result's `source` of a measured run (`complete`: every planned point ran)."""
    return unchecked(
        MeasuredSource,
        kind="measured",
        tool=unchecked(Tool, name=TOOL_NAME, version=tool_version(), commit=tool_commit()),
        command=provenance.command,
        server_command=provenance.server_command,
        host=_host(provenance.host, deployment),
        client=provenance.client,
        server=_server(provenance.server),
        started_at=_timestamp(provenance.started_at),
        finished_at=_timestamp(provenance.finished_at),
        submitter=provenance.submitter,
        complete=complete,
    )


def default_submitter() -> str:
    """`git config github.user`, else the login name."""
    try:
        completed = subprocess.run(
            ["git", "config", "--get", "github.user"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if completed.returncode == 0 and completed.stdout.strip():
            return completed.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def engine_host(
    inventory: GpuInventory | None,
    launched: bool,
    local: bool,
    engine: str,
    version: str | None,
) -> Host:
    """The engine's host: this machine's facts only where it is that host, and versions
    installed here only where this environment launched the engine."""
    vllm_version = version if engine == "vllm" else None
    return host_info(inventory, vllm_version, this_machine=local, own_environment=launched)
