"""What `bench run` takes and gives as a library call: one typed `RunConfig` in, one `RunResult`
out (`bench.run.runner.run_benchmark`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infermeter.bench.client.stream import Api
from infermeter.bench.run.attributes import attributes
from infermeter.bench.run.point_summary import PointSummary, VerdictThresholds
from infermeter.bench.run.search import SearchResult, SearchSpec, search_json
from infermeter.bench.workloads.lengths import LengthDistribution
from infermeter.registry.models import Slo

MULTITURN = "chat-multiturn"


@dataclass(frozen=True)
class RunConfig:
    """Everything `bench run --endpoint` needs; see `infermeter bench run --help`."""

    endpoint: str
    model: str | None = None
    api: Api = "completions"
    profile: str = "chat"
    input_len: LengthDistribution | None = None
    output_len: LengthDistribution | None = None
    dataset: Path | None = None
    tokenizer: str | None = None
    concurrency: tuple[int, ...] = ()
    request_rates: tuple[float, ...] = ()
    max_concurrency: int | None = None
    burstiness: float = 1.0
    num_requests: int | None = None
    duration_s: float | None = None
    warmup_requests: int | None = None
    seed: int = 0
    prompt_salt: int = 0
    shared_prefix_tokens: int = 0
    timeout_s: float = 600.0
    # Why the endpoint answered nothing when the session first asked it (a server that takes
    # the connection and stays silent): the run refuses it at once where it would ask for the
    # models, after its own options are checked.
    unanswered: str | None = None
    slo: Slo = field(default_factory=Slo)
    ignore_eos: bool = True
    continuous_usage_stats: bool = False
    workers: int = 1
    extra_body: Mapping[str, Any] | None = None
    api_key: str | None = field(default=None, repr=False)  # sent, never stored or printed
    search: SearchSpec | None = None
    stop_when_saturated: bool = False
    thresholds: VerdictThresholds = field(default_factory=VerdictThresholds)
    turns: LengthDistribution | None = None
    think_time_s: float | None = None
    trace: Path | None = None
    trace_speed: float = 1.0
    trace_block_size: int | None = None


@dataclass
class RunResult:
    """The summaries of the points that finished, and whether the run finished."""

    endpoint: str
    model: str
    api: Api
    profile: str
    seed: int
    prompt_salt: int
    points: list[PointSummary] = field(default_factory=list)
    incomplete: bool = False
    stop_reason: str | None = None
    search: SearchResult | None = None
    dataset_sha256: str | None = None  # of the --dataset file the requests came from
    trace: dict[str, Any] | None = (
        None  # the replayed trace's identity (`bench.workloads.trace_plan`)
    )

    def as_json(self) -> dict[str, Any]:
        """The `--json` object: `{"points": [...], ...}`."""
        return {
            **attributes(self, "endpoint", "model", "api", "profile", "seed", "prompt_salt"),
            **attributes(self, "incomplete", "stop_reason"),
            "points": [point.as_json() for point in self.points],
            "search": search_json(self.search) if self.search is not None else None,
            "trace": self.trace,
        }
