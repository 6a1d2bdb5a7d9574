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
from infermeter.bench.plan.options import RunOptions
from infermeter.bench.result.deployment import Deployment
from infermeter.bench.result.points import PointTelemetry
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.registry.models import Result

Notify = Callable[[str], None]


@dataclass(frozen=True)
class SessionConfig:
    """A whole `bench run`: its `options` as given (what the result file needs is read from
    them: --gpu, --model-id, --submitter, …), the load (`run`), the server to launch (None:
    `run.endpoint`), and the result file to write (None: none)."""

    options: RunOptions
    run: RunConfig
    command: str
    server: ServerConfig | None = None
    output: Path | None = None


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
