"""A load point as the result file states it: load, requests, failures, tokens, throughput,
latency distributions, telemetry, turns and validity verdicts.

`load_point` is one point as the registry's `LoadPoint`, built unchecked (the one builder,
`registry.builder.build_from_parts`, validates the whole result); failures map the
client's kinds onto the result's (`connection` counts as `disconnect`, `empty_output` as
`server_error`, so the kinds add up to `failed`); a point in which the engine preempted
sequences gets a `preemptions` verdict; queue time keeps only vLLM's mean. `at_slo`
turns a search's best probe into the server-at-SLO point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from infermeter.bench.client.stream import ErrorKind
from infermeter.bench.run.config import RunResult
from infermeter.bench.run.distribution import Distribution
from infermeter.bench.run.point_summary import LATENCIES, STORED, PointSummary
from infermeter.bench.run.search import SLO_PERCENTILE
from infermeter.bench.telemetry.engine_metrics import EngineWindow
from infermeter.bench.telemetry.sampler import GpuWindow
from infermeter.registry.builder import unchecked
from infermeter.registry.models import (
    CachedShareStats,
    EngineTelemetry,
    FailureCounts,
    GpuTelemetry,
    LatencyStats,
    Load,
    LoadPoint,
    RateSearch,
    RequestFigures,
    Telemetry,
    TurnStats,
    Verdict,
)

if TYPE_CHECKING:
    from infermeter.bench.workloads.conversation import TurnSummary
    from infermeter.bench.workloads.trace_replay import CachedShareSummary

Group = TypeVar("Group", TurnStats, CachedShareStats)

_FAILURE_FIELDS = {
    ErrorKind.TIMEOUT: "timeout",
    ErrorKind.HTTP_STATUS: "http_status",
    ErrorKind.DISCONNECT: "disconnect",
    ErrorKind.CONNECTION: "disconnect",
    ErrorKind.MALFORMED_STREAM: "malformed_stream",
    ErrorKind.SERVER_ERROR: "server_error",
    ErrorKind.EMPTY_OUTPUT: "server_error",
    ErrorKind.OUT_OF_MEMORY: "out_of_memory",
}


@dataclass(frozen=True)
class PointTelemetry:
    """A point's GPU and engine figures (each None when not available)."""

    gpu: GpuWindow | None = None
    engine: EngineWindow | None = None


def rounded(value: float | None, digits: int = 3) -> float | None:
    """`value` to `digits` decimals, None staying None."""
    return None if value is None else round(value, digits)


_STATISTICS = ("mean", "p50", "p90", "p95", "p99", "max")


def _latency(distribution: Distribution) -> LatencyStats:
    if distribution.n == 0:
        return unchecked(LatencyStats, n=0)
    return unchecked(
        LatencyStats,
        n=distribution.n,
        **{name: rounded(getattr(distribution, name)) for name in _STATISTICS},
    )


def _lateness(distribution: Distribution | None) -> LatencyStats | None:
    """The send lag as stored: a request the event loop woke a clock tick early for was not
    early, so a lag below 0 is stored as 0."""
    if distribution is None:
        return None
    stats = _latency(distribution)
    late = {name: max(value, 0) for name in _STATISTICS if (value := getattr(stats, name))}
    return stats.model_copy(update=late)


def _ms_up(seconds: float | None) -> float | None:
    """Seconds as ms rounded *up* to the microsecond, so a bound in whole microseconds is met
    by the stored figure exactly when it was met by the raw one."""
    if seconds is None:
        return None
    return math.ceil(round(seconds * 1e6, 3)) / 1e3


def _request_figures(summary: PointSummary) -> RequestFigures | None:
    """Each successful request's figures an SLO bounds, as columns (None for no request)."""
    each = summary.per_request
    if not each:
        return None
    return unchecked(
        RequestFigures,
        output_tokens=[r.output_tokens for r in each],
        ttft_ms=[_ms_up(r.ttft_s) for r in each],
        tpot_ms=[_ms_up(r.tpot_s) for r in each],
        e2e_ms=[_ms_up(r.e2e_s) for r in each],
    )


def _failures(summary: PointSummary) -> FailureCounts:
    counts = dict.fromkeys(sorted(set(_FAILURE_FIELDS.values())), 0)
    for kind, count in summary.failures_by_kind.items():
        counts[_FAILURE_FIELDS.get(ErrorKind(kind), "server_error")] += count
    return unchecked(FailureCounts, **counts)


def _load(summary: PointSummary, burstiness: float, cap: int | None = None) -> Load:
    if summary.concurrency is not None:
        return unchecked(Load, arrival="closed", concurrency=summary.concurrency)
    load: dict[str, Any] = {"arrival": "poisson", "request_rate": summary.request_rate}
    if burstiness != 1.0:
        load |= {"arrival": "gamma", "burstiness": burstiness}
    if cap is not None:
        load["concurrency"] = cap  # an open loop's cap on requests in flight
    return unchecked(Load, **load)


def _gpu_telemetry(gpu: GpuWindow) -> GpuTelemetry:
    return unchecked(
        GpuTelemetry,
        gpu_utilization_pct_mean=rounded(gpu.gpu_utilization_pct_mean, 2),
        memory_used_bytes_max=gpu.memory_used_bytes_max,
        power_w_mean=rounded(gpu.power_w_mean, 2),
        energy_j=rounded(gpu.energy_j, 2),
        sm_clock_mhz_mean=rounded(gpu.sm_clock_mhz_mean, 1),
        temperature_c_max=gpu.temperature_c_max,
    )


def _engine_telemetry(engine: EngineWindow) -> EngineTelemetry:
    return unchecked(
        EngineTelemetry,
        kv_cache_usage_pct_mean=rounded(engine.kv_cache_usage_pct_mean, 2),
        kv_cache_usage_pct_max=rounded(engine.kv_cache_usage_pct_max, 2),
        preemptions=engine.preemptions,
        prefix_cache_hit_rate=rounded(engine.prefix_cache_hit_rate, 4),
    )


def _telemetry(telemetry: PointTelemetry | None) -> Telemetry | None:
    if telemetry is None or (telemetry.gpu is None and telemetry.engine is None):
        return None
    return unchecked(
        Telemetry,
        gpu=None if telemetry.gpu is None else _gpu_telemetry(telemetry.gpu),
        engine=None if telemetry.engine is None else _engine_telemetry(telemetry.engine),
    )


def _group_model(name: str) -> type[BaseModel]:
    """The model of the load point's group `name` (`throughput` → `Throughput`)."""
    model = LoadPoint.model_fields[name].annotation
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"LoadPoint.{name} is no group of figures (a STORED path's group)")
    return model


def _stored(summary: PointSummary) -> dict[str, Any]:
    """The load point's fields that state the summary's figures as they are (`STORED`), each
    at its path: `throughput.requests_per_s` in the point's `Throughput`, `concurrency_mean`
    as it is; `requests.sent` is the requests that completed or failed."""
    fields: dict[str, Any] = {}
    groups: dict[str, dict[str, Any]] = {"requests": {"sent": summary.completed + summary.failed}}
    for name, (path, digits) in STORED.items():
        group, _, key = path.rpartition(".")
        value = getattr(summary, name)
        (groups.setdefault(group, {}) if group else fields)[key] = (
            value if digits is None else rounded(value, digits)
        )
    return fields | {name: unchecked(_group_model(name), **of) for name, of in groups.items()}


def load_point(
    summary: PointSummary,
    telemetry: PointTelemetry | None,
    burstiness: float,
    cap: int | None = None,
) -> LoadPoint:
    """The result's load point of one summary, with its telemetry (`burstiness`: a gamma
    arrival's shape; `cap`: an open loop's cap on requests in flight)."""
    engine = telemetry.engine if telemetry is not None else None
    queue = None
    if engine is not None and engine.queue_ms_mean is not None:
        queue = unchecked(LatencyStats, mean=rounded(engine.queue_ms_mean))
    return unchecked(
        LoadPoint,
        load=_load(summary, burstiness, cap),
        duration_s=rounded(summary.window_s) if summary.window_s > 0 else None,
        **_stored(summary),
        failures=_failures(summary),
        **{name: _latency(getattr(summary, name)) for name in LATENCIES},
        request_figures=_request_figures(summary),
        queue_ms=queue,
        telemetry=_telemetry(telemetry),
        turns=_turns(summary),
        send_lag_ms=_lateness(summary.send_lag_ms),
        ttft_by_cached_share=_cached_shares(summary),
        validity=_validity(summary, telemetry),
    )


def _validity(summary: PointSummary, telemetry: PointTelemetry | None) -> list[Verdict]:
    """The point's verdicts, and the telemetry's: energy not measured, sequences preempted."""
    verdicts = [(v.code, v.message) for v in summary.verdicts]
    engine = telemetry.engine if telemetry is not None else None
    gpu = telemetry.gpu if telemetry is not None else None
    if gpu is not None and gpu.energy_missing_reason is not None:
        verdicts.append(("energy_not_measured", f"no energy: {gpu.energy_missing_reason}"))
    if engine is not None and engine.preemptions:
        verdicts.append(
            (
                "preemptions",
                f"the engine preempted {engine.preemptions} sequences during the point; the "
                "latency tail includes their recomputation",
            )
        )
    return [unchecked(Verdict, code=code, message=message) for code, message in verdicts]


def _ttft_group(
    model: type[Group], group: TurnSummary | CachedShareSummary, **stored: Any
) -> Group:
    """A group of a point's requests (a turn, a cached-share bucket) as its registry `model`,
    whose fields have the group's names: the TTFT distribution as stored, the `stored` figures
    as given, the others as they are."""
    return unchecked(model, **{**vars(group), "ttft_ms": _latency(group.ttft_ms), **stored})


def _turns(summary: PointSummary) -> list[TurnStats] | None:
    """A multi-turn point's figures per turn (None for other points)."""
    return [
        _ttft_group(TurnStats, turn, input_tokens_mean=rounded(turn.input_tokens_mean, 1))
        for turn in summary.turns
    ] or None


def _cached_shares(summary: PointSummary) -> list[CachedShareStats] | None:
    """A trace replay's TTFT by the share of the prompt found cached (None for other points)."""
    return [_ttft_group(CachedShareStats, bucket) for bucket in summary.cached_shares] or None


def at_slo(run: RunResult, points: list[LoadPoint]) -> list[LoadPoint]:
    """The points with a search's answer, the best probe's point, as the server-at-SLO point:
    its load carries the bounds it met (`rate_search` for an open loop's rate,
    `concurrency_search` for a closed loop's concurrency); the other probes stay ordinary
    points."""
    search = run.search
    if search is None or search.best is None:
        return points
    field = "rate_search" if search.spec.kind == "rate" else "concurrency_search"
    slo = search.spec.slo
    bounds = unchecked(
        RateSearch,
        percentile=SLO_PERCENTILE,
        ttft_ms=slo.ttft_ms,
        tpot_ms=slo.tpot_ms,
        e2e_ms=slo.e2e_ms,
    )
    return [
        point.model_copy(update={"load": point.load.model_copy(update={field: bounds})})
        if summary is search.best.summary
        else point
        for summary, point in zip(run.points, points, strict=True)
    ]
