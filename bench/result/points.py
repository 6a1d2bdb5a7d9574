"""A load point as the result file states it: load, requests, failures, tokens, throughput,
latency distributions, telemetry, turns and validity verdicts.

`point_data` is one point's mapping (for `registry.builder.build_result`); failures map the
client's kinds onto the result's (`connection` counts as `disconnect`, `empty_output` as
`server_error`, so the kinds add up to `failed`); a point in which the engine preempted
sequences gets a `preemptions` verdict; queue time keeps only vLLM's mean. `mark_server_at_slo`
turns a search's best probe into the server-at-SLO point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from infermeter.bench.client.stream import ErrorKind
from infermeter.bench.run.config import RunResult
from infermeter.bench.run.distribution import Distribution
from infermeter.bench.run.point_summary import LATENCIES, STORED, PointSummary
from infermeter.bench.run.search import SLO_PERCENTILE
from infermeter.bench.telemetry.engine_metrics import EngineWindow
from infermeter.bench.telemetry.sampler import GpuWindow

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


def _latency(distribution: Distribution) -> dict[str, Any]:
    if distribution.n == 0:
        return {"n": 0}
    return {
        "n": distribution.n,
        **{
            name: rounded(getattr(distribution, name))
            for name in ("mean", "p50", "p90", "p95", "p99", "max")
        },
    }


def _lateness(distribution: Distribution | None) -> dict[str, Any] | None:
    """The send lag as stored: a request the event loop woke a clock tick early for was not
    early, so a lag below 0 is stored as 0."""
    if distribution is None:
        return None
    data = _latency(distribution)
    return {name: max(value, 0) if name != "n" else value for name, value in data.items()}


def _ms_up(seconds: float | None) -> float | None:
    """Seconds as ms rounded *up* to the microsecond, so a bound in whole microseconds is met
    by the stored figure exactly when it was met by the raw one."""
    if seconds is None:
        return None
    return math.ceil(round(seconds * 1e6, 3)) / 1e3


def _request_figures(summary: PointSummary) -> dict[str, list[Any]] | None:
    """Each successful request's figures an SLO bounds, as columns (None for no request)."""
    each = summary.per_request
    if not each:
        return None
    return {
        "output_tokens": [r.output_tokens for r in each],
        "ttft_ms": [_ms_up(r.ttft_s) for r in each],
        "tpot_ms": [_ms_up(r.tpot_s) for r in each],
        "e2e_ms": [_ms_up(r.e2e_s) for r in each],
    }


def _failures(summary: PointSummary) -> dict[str, int]:
    counts = dict.fromkeys(sorted(set(_FAILURE_FIELDS.values())), 0)
    for kind, count in summary.failures_by_kind.items():
        counts[_FAILURE_FIELDS.get(ErrorKind(kind), "server_error")] += count
    return counts


def _load(summary: PointSummary, burstiness: float, cap: int | None = None) -> dict[str, Any]:
    if summary.concurrency is not None:
        return {"arrival": "closed", "concurrency": summary.concurrency}
    load: dict[str, Any] = {"arrival": "poisson", "request_rate": summary.request_rate}
    if burstiness != 1.0:
        load |= {"arrival": "gamma", "burstiness": burstiness}
    if cap is not None:
        load["concurrency"] = cap  # an open loop's cap on requests in flight
    return load


def _telemetry(telemetry: PointTelemetry | None) -> dict[str, Any] | None:
    if telemetry is None:
        return None
    data: dict[str, Any] = {}
    if telemetry.gpu is not None:
        gpu = telemetry.gpu
        data["gpu"] = {
            "gpu_utilization_pct_mean": rounded(gpu.gpu_utilization_pct_mean, 2),
            "memory_used_bytes_max": gpu.memory_used_bytes_max,
            "power_w_mean": rounded(gpu.power_w_mean, 2),
            "energy_j": rounded(gpu.energy_j, 2),
            "sm_clock_mhz_mean": rounded(gpu.sm_clock_mhz_mean, 1),
            "temperature_c_max": gpu.temperature_c_max,
        }
    if telemetry.engine is not None:
        engine = telemetry.engine
        data["engine"] = {
            "kv_cache_usage_pct_mean": rounded(engine.kv_cache_usage_pct_mean, 2),
            "kv_cache_usage_pct_max": rounded(engine.kv_cache_usage_pct_max, 2),
            "preemptions": engine.preemptions,
            "prefix_cache_hit_rate": rounded(engine.prefix_cache_hit_rate, 4),
        }
    return data or None


def _stored(summary: PointSummary) -> dict[str, Any]:
    """The summary's figures that the load point states as they are (`STORED`), each at its
    path (`throughput.requests_per_s` → `{"throughput": {"requests_per_s": …}}`)."""
    data: dict[str, Any] = {}
    for name, (path, digits) in STORED.items():
        *groups, key = path.split(".")
        target = data
        for group in groups:
            target = target.setdefault(group, {})
        value = getattr(summary, name)
        target[key] = value if digits is None else rounded(value, digits)
    return data


def point_data(
    summary: PointSummary,
    telemetry: PointTelemetry | None,
    burstiness: float,
    cap: int | None = None,
) -> dict[str, Any]:
    engine = telemetry.engine if telemetry is not None else None
    queue = None
    if engine is not None and engine.queue_ms_mean is not None:
        queue = {"mean": rounded(engine.queue_ms_mean)}
    stored = _stored(summary)
    stored["requests"]["sent"] = summary.completed + summary.failed
    return {
        "load": _load(summary, burstiness, cap),
        "duration_s": rounded(summary.window_s) if summary.window_s > 0 else None,
        **stored,
        "failures": _failures(summary),
        **{name: _latency(getattr(summary, name)) for name in LATENCIES},
        "request_figures": _request_figures(summary),
        "queue_ms": queue,
        "telemetry": _telemetry(telemetry),
        "turns": _turns(summary),
        "send_lag_ms": _lateness(summary.send_lag_ms),
        "ttft_by_cached_share": _cached_shares(summary),
        "validity": _validity(summary, telemetry),
    }


def _validity(summary: PointSummary, telemetry: PointTelemetry | None) -> list[dict[str, str]]:
    """The point's verdicts, and the telemetry's: energy not measured, sequences preempted."""
    verdicts = [{"code": v.code, "message": v.message} for v in summary.verdicts]
    engine = telemetry.engine if telemetry is not None else None
    gpu = telemetry.gpu if telemetry is not None else None
    if gpu is not None and gpu.energy_missing_reason is not None:
        verdicts.append(
            {"code": "energy_not_measured", "message": f"no energy: {gpu.energy_missing_reason}"}
        )
    if engine is not None and engine.preemptions:
        verdicts.append(
            {
                "code": "preemptions",
                "message": f"the engine preempted {engine.preemptions} sequences during the "
                "point; the latency tail includes their recomputation",
            }
        )
    return verdicts


def _turns(summary: PointSummary) -> list[dict[str, Any]] | None:
    """A multi-turn point's figures per turn (None for other points)."""
    return [
        {
            "turn": turn.turn,
            "requests": turn.requests,
            "input_tokens_mean": rounded(turn.input_tokens_mean, 1),
            "ttft_ms": _latency(turn.ttft_ms),
        }
        for turn in summary.turns
    ] or None


def _cached_shares(summary: PointSummary) -> list[dict[str, Any]] | None:
    """A trace replay's TTFT by the share of the prompt found cached (None for other points)."""
    return [
        {
            "cached_share_min": bucket.low,
            "cached_share_max": bucket.high,
            "requests": bucket.requests,
            "ttft_ms": _latency(bucket.ttft_ms),
        }
        for bucket in summary.cached_shares
    ] or None


def mark_server_at_slo(run: RunResult, points: list[dict[str, Any]]) -> None:
    """A search's answer, the best probe's point, becomes the server-at-SLO point: its load
    carries the bounds it met (`rate_search` for an open loop's rate, `concurrency_search` for
    a closed loop's concurrency); the other probes stay ordinary points."""
    search = run.search
    if search is None or search.best is None:
        return
    field = "rate_search" if search.spec.kind == "rate" else "concurrency_search"
    for summary, point in zip(run.points, points, strict=True):
        if summary is search.best.summary:
            slo = search.spec.slo
            point["load"][field] = {
                "percentile": SLO_PERCENTILE,
                "ttft_ms": slo.ttft_ms,
                "tpot_ms": slo.tpot_ms,
                "e2e_ms": slo.e2e_ms,
            }
            return
