"""What one `bench run` session takes and gives (`bench.session.session.run_session`): a
`SessionConfig` in (the load, the server to launch, what the result file needs), a
`SessionOutcome` out (what it measured and wrote).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from infermeter.bench.launch.server import ServerConfig
from infermeter.bench.launch.vllm_log import StartupFigures
from infermeter.bench.result.deployment import Deployment
from infermeter.bench.result.points import PointTelemetry
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.registry.models import Result

Notify = Callable[[str], None]


@dataclass(frozen=True)
class SessionConfig:
    """A whole `bench run`: the load (`run`), the server to launch (None: `run.endpoint`),
    and what the result file needs."""

    run: RunConfig
    command: str
    server: ServerConfig | None = None
    output: Path | None = None
    raw_records: bool = False
    gpu_id: str | None = None
    model_id: str | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    gpu_indices: tuple[int, ...] | None = None
    submitter: str | None = None
    telemetry: bool = True
    engine: str | None = None
    engine_version: str | None = None
    server_command: str | None = None  # with an endpoint: how its server was started
    nodes: int | None = None  # with an endpoint: the hosts its server spans


@dataclass
class SessionOutcome:
    """What a session measured and wrote."""

    run: RunResult
    telemetry: list[PointTelemetry | None] = field(default_factory=list)
    deployment: Deployment | None = None
    result: Result | None = None
    output: Path | None = None
    raw_records: Path | None = None
    log_path: Path | None = None
    startup: StartupFigures | None = None
    engine_version: str | None = None
    notes: list[str] = field(default_factory=list)
