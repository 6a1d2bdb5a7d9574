"""GuideLLM's `benchmarks.json` report (`guidellm benchmark … --outputs json`).

Followed: GuideLLM v0.7.3 (tag commit 39383552), report `metadata.version` 2, as written by
`GenerativeBenchmarksReport` (src/guidellm/benchmark/schemas/{report,benchmark,metrics}.py,
src/guidellm/schemas/statistics.py, src/guidellm/scheduler/strategies.py). Report version 1
(GuideLLM 0.5–0.6) has the same `benchmarks[]` layout and is read too; older reports (no
`metadata.version`, `run_stats` instead of `metrics.request_totals`) are refused.

Each entry of `benchmarks` ran one scheduling strategy, i.e. one load → one load point; the
benchmarks of a sweep (and of several reports of one deployment) become the points of one result.
Every metric is a StatusDistributionSummary; only its `successful` part is read, as vLLM reports
successful requests only:

- `config.strategy`: synchronous → closed, 1 in flight; concurrent → closed, `streams`;
  throughput → closed, `max_concurrency`; poisson → poisson `rate`, constant → constant `rate`
  (`max_concurrency` as the cap of either); trace (the `replay` profile, GuideLLM 0.8) → a
  replay of the one `mooncake` dataset of `config.spec.data`, with the trace's identity
  (`bench.importers.trace_runs`, the file given with --trace) and speed 1 / (1000 ×
  `data.time_scale` × `strategy.time_scale`), as GuideLLM reads the timestamps as seconds and
  Mooncake's are ms; its `root_late` warning becomes a `client_send_lag` verdict, and requests it
  scheduled (`scheduler_state.created_requests`) but counted nowhere a verdict of their own.
- `config.backend.request_format` (or, in report version 1, `args.request_format`) → the API.
- `duration` (the measured window, seconds) → duration_s; `start_time`/`end_time` (epoch
  seconds) → the run's window.
- `metrics.request_totals`: successful → completed, errored → failed, their sum → sent;
  incomplete requests (cancelled when the benchmark ended) are noted as a verdict.
- `prompt_token_count`/`output_token_count` `total_sum` → tokens; `requests_per_second`,
  `output_tokens_per_second`, `tokens_per_second` `mean` (a time-weighted rate, i.e. count over
  the window) → throughput.
- `time_to_first_token_ms` → ttft_ms and `request_latency` (seconds, × 1000) → e2e_ms: mean,
  percentiles p50/p90/p95/p99, max, count → n.
- `inter_token_latency_ms` → itl_ms mean and n only: GuideLLM summarises each request's mean gap
  weighted by its gap count, so the mean is the mean gap (and `count` the number of gaps), but
  its percentiles are percentiles of per-request means, not of gaps. Not mapped:
  `time_per_output_token_ms` (it includes the first token, unlike the registry's TPOT).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infermeter.bench.importers.common import (
    ImportFacts,
    ImportFormat,
    Measured,
    ResultImportError,
    count,
    mapping,
    number,
    positive,
    request_counts,
    same,
    scaled,
)
from infermeter.bench.importers.trace_runs import (
    ImportedReplay,
    TraceReplayed,
    measured_runs,
    replayed_trace,
)
from infermeter.calculators.units import MS_PER_S
from infermeter.registry.builder import unchecked
from infermeter.registry.models import (
    LatencyStats,
    Load,
    LoadPoint,
    Throughput,
    TokenCounts,
    Verdict,
)
from infermeter.registry.models.provenance import GUIDELLM_TOOL

REPORT_VERSIONS = (1, 2)
_API = {"/v1/chat/completions": "chat", "/v1/completions": "completions"}
_PERCENTILES = ("p50", "p90", "p95", "p99")


def looks_like_guidellm(values: Sequence[Any]) -> bool:
    """Whether parsed JSON values are one GuideLLM report."""
    if len(values) != 1 or not isinstance(values[0], dict):
        return False
    report = values[0]
    metadata = report.get("metadata")
    return isinstance(report.get("benchmarks"), list) and (
        (isinstance(metadata, dict) and "guidellm_version" in metadata)
        or any(
            isinstance(benchmark, dict) and benchmark.get("type_") == "generative_benchmark"
            for benchmark in report["benchmarks"]
        )
    )


def read_guidellm_report(path: Path) -> dict[str, Any]:
    """The report in `path`, checked for the version and shape this importer reads."""
    report: dict[str, Any] = GUIDELLM_FORMAT.read(path)[0]
    metadata = mapping(report, "metadata", str(path)) or {}
    version = metadata.get("version")
    if version not in REPORT_VERSIONS:
        raise ResultImportError(
            f"{path}: GuideLLM report version {version!r} is not supported; expected "
            f"metadata.version {' or '.join(map(str, REPORT_VERSIONS))} (GuideLLM 0.5 to 0.7)"
        )
    if not report["benchmarks"]:
        raise ResultImportError(f"{path}: the report holds no benchmarks")
    return report


def _load(strategy: dict[str, Any], where: str) -> tuple[Load, list[Verdict]]:
    kind = strategy.get("type_")
    cap = count(strategy, "max_concurrency", where)
    verdicts = []
    rampup_s = number(strategy, "rampup_duration", where)
    if rampup_s:
        verdicts.append(
            unchecked(
                Verdict,
                code="ramp-up",
                message=f"GuideLLM ramped the load up over the first {rampup_s:g} s; "
                "the figures include that ramp unless a warmup excluded it",
            )
        )
    if kind == "synchronous":
        return unchecked(Load, arrival="closed", concurrency=1), verdicts
    if kind == "concurrent":
        streams = count(strategy, "streams", where)
        if not streams:
            raise ResultImportError(f"{where}.streams: a concurrent strategy needs streams >= 1")
        return unchecked(Load, arrival="closed", concurrency=streams), verdicts
    if kind == "throughput":
        if not cap:
            raise ResultImportError(
                f"{where}: a throughput strategy without max_concurrency has no known number "
                "of requests in flight"
            )
        return unchecked(Load, arrival="closed", concurrency=cap), verdicts
    if kind in ("poisson", "constant"):
        rate = number(strategy, "rate", where)
        if not rate or rate < 0:
            raise ResultImportError(f"{where}.rate: a {kind} strategy needs a rate above 0")
        load: dict[str, Any] = {"arrival": kind, "request_rate": rate}
        if cap:
            load["concurrency"] = cap
        return unchecked(Load, **load), verdicts
    raise ResultImportError(
        f"{where}.type_: unknown strategy {kind!r}; expected synchronous, concurrent, "
        "throughput, poisson or constant"
    )


def _successful(metrics: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    summary = mapping(metrics, name, where)
    return mapping(summary, "successful", f"{where}.{name}")


def _latency(
    metrics: dict[str, Any], name: str, where: str, scale: float, with_percentiles: bool = True
) -> LatencyStats | None:
    """Stats in ms of `metrics[name].successful` (values × `scale`); None when it has no samples."""
    distribution = _successful(metrics, name, where)
    where = f"{where}.{name}.successful"
    if distribution is None:
        return None
    samples = count(distribution, "count", where)
    if not samples:
        return None
    values: dict[str, float | None] = {"mean": number(distribution, "mean", where)}
    if with_percentiles:
        percentiles = mapping(distribution, "percentiles", where) or {}
        for key in _PERCENTILES:
            values[key] = number(percentiles, key, f"{where}.percentiles")
        if values["p50"] is None:
            values["p50"] = number(distribution, "median", where)
        values["max"] = number(distribution, "max", where)
    stats: dict[str, Any] = {
        key: scaled(value, scale) for key, value in values.items() if value is not None
    }
    stats["n"] = samples
    return unchecked(LatencyStats, **stats)


def _stat(metrics: dict[str, Any], name: str, key: str, where: str) -> float | None:
    distribution = _successful(metrics, name, where)
    return None if distribution is None else number(distribution, key, f"{where}.{name}")


def _whole(value: float | None) -> int | None:
    # GuideLLM stores sums as mean × count, a float; the count of tokens is a whole number.
    return None if value is None else round(value)


def _point(benchmark: dict[str, Any], where: str, trace: ImportedReplay | None = None) -> LoadPoint:
    config = mapping(benchmark, "config", where)
    strategy = mapping(config, "strategy", f"{where}.config")
    metrics = mapping(benchmark, "metrics", where)
    if strategy is None or metrics is None:
        raise ResultImportError(
            f"{where}: expected config.strategy and metrics (GuideLLM 0.5 or later)"
        )
    if trace is None:
        load, verdicts = _load(strategy, f"{where}.config.strategy")
    else:
        load, verdicts = trace.load, list(trace.verdicts)
    totals = mapping(metrics, "request_totals", f"{where}.metrics") or {}
    completed = count(totals, "successful", f"{where}.metrics.request_totals")
    failed = count(totals, "errored", f"{where}.metrics.request_totals")
    incomplete = count(totals, "incomplete", f"{where}.metrics.request_totals")
    if incomplete:
        verdicts.append(
            unchecked(
                Verdict,
                code="incomplete-requests",
                message=f"{incomplete} requests were still running when GuideLLM ended the "
                "benchmark and were cancelled; they are counted neither as completed nor failed",
            )
        )
    where_metrics = f"{where}.metrics"
    duration = positive(benchmark, "duration", where)
    tokens = unchecked(
        TokenCounts,
        input=_whole(_stat(metrics, "prompt_token_count", "total_sum", where_metrics)),
        output=_whole(_stat(metrics, "output_token_count", "total_sum", where_metrics)),
    )
    throughput = unchecked(
        Throughput,
        requests_per_s=_stat(metrics, "requests_per_second", "mean", where_metrics),
        output_tokens_per_s=_stat(metrics, "output_tokens_per_second", "mean", where_metrics),
        total_tokens_per_s=_stat(metrics, "tokens_per_second", "mean", where_metrics),
    )
    latencies = {}
    if completed:
        latencies = {
            "ttft_ms": _latency(metrics, "time_to_first_token_ms", where_metrics, 1.0),
            "e2e_ms": _latency(metrics, "request_latency", where_metrics, MS_PER_S),
            "itl_ms": _latency(
                metrics, "inter_token_latency_ms", where_metrics, 1.0, with_percentiles=False
            ),
        }
    return unchecked(
        LoadPoint,
        load=load,
        duration_s=duration,
        requests=request_counts(completed, failed),
        tokens=tokens,
        throughput=throughput,
        validity=verdicts,
        **latencies,
    )


# GuideLLM's Mooncake data arguments (src/guidellm/schemas/data/deserializers/trace_common.py,
# trace_mooncake.py in 0.8.1) with the values under which it replays the trace as written.
_AS_WRITTEN = {
    "timestamp_column": "timestamp",
    "prompt_tokens_column": "input_length",
    "output_tokens_column": "output_length",
    "hash_ids_column": "hash_ids",
    "max_wait": None,
    "max_session_wait": None,
    "min_concurrent_sessions": None,
    "copies": 1,
}
# GuideLLM reads a trace's timestamps as seconds; Mooncake's are milliseconds.
_TRACE_UNITS_PER_S = 1000.0


def _mooncake_data(report: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """(where, data arguments) of the one Mooncake dataset a replay report states
    (`config.spec.data`, GuideLLM 0.8)."""
    spec = mapping(mapping(report, "config", where), "spec", f"{where}.config") or {}
    data = spec.get("data")
    found = [
        (f"{where}.config.spec.data[{index}]", entry)
        for index, entry in enumerate(data if isinstance(data, list) else [])
        if isinstance(entry, dict)
    ]
    if len(found) != 1 or found[0][1].get("kind") != "mooncake":
        raise ResultImportError(
            f"{where}.config.spec.data: a trace replay is imported from one dataset of kind "
            "mooncake (GuideLLM 0.8); found "
            + (", ".join(str(entry.get("kind")) for _, entry in found) or "none")
        )
    at, entry = found[0]
    for name, value in _AS_WRITTEN.items():
        if entry.get(name, value) != value:
            raise ResultImportError(
                f"{at}.{name}: {entry[name]!r} changes the trace; only a replay of the trace "
                f"as written ({name} {value!r}) is the trace's workload"
            )
    return at, entry


def _replay_findings(benchmark: dict[str, Any], totals: dict[str, Any]) -> list[Verdict]:
    """GuideLLM's warnings about the replay (a late start of the trace's requests:
    `root_late`), and requests it scheduled but counted nowhere."""
    verdicts = [
        unchecked(
            Verdict,
            code="client_send_lag" if warning.get("code") == "root_late" else "guidellm_warning",
            message=f"GuideLLM: {warning.get('message')} ({warning.get('note')})",
        )
        for warning in benchmark.get("warnings") or []
        if isinstance(warning, dict) and warning.get("message")
    ]
    state = benchmark.get("scheduler_state") or {}
    created, total = state.get("created_requests"), totals.get("total")
    if isinstance(created, int) and isinstance(total, int) and created > total:
        verdicts.append(
            unchecked(
                Verdict,
                code="requests_not_counted",
                message=f"GuideLLM scheduled {created} of the trace's requests and reports "
                f"{total}: {created - total} still running when it ended the benchmark "
                "counted neither as completed nor failed",
            )
        )
    return verdicts


def _trace_run(
    report: tuple[str, dict[str, Any]], benchmark: dict[str, Any], where: str, facts: ImportFacts
) -> ImportedReplay | None:
    """The trace a benchmark of the `replay` profile (strategy `trace`) replayed; None for
    another strategy. Speed: GuideLLM waits `data.time_scale × strategy.time_scale × the
    timestamp`, in seconds, where Mooncake's timestamps are ms."""
    config = mapping(benchmark, "config", where) or {}
    strategy = mapping(config, "strategy", f"{where}.config") or {}
    if strategy.get("type_") != "trace":
        return None
    at, data = _mooncake_data(report[1], report[0])
    source = mapping(data, "source", at) or {}
    scale = (number(data, "time_scale", at) or 1.0) * (
        number(strategy, "time_scale", f"{where}.config.strategy") or 1.0
    )
    totals = mapping(mapping(benchmark, "metrics", where), "request_totals", where) or {}
    state = benchmark.get("scheduler_state") or {}
    sent = state.get("created_requests") if isinstance(state, dict) else None
    stated = TraceReplayed(
        where=f"{at}.source.path",
        file=str(source.get("path") or ""),
        speed=round(1.0 / (_TRACE_UNITS_PER_S * scale), 9) if scale > 0 else 0.0,
        sent=sent if isinstance(sent, int) else count(totals, "total", where),
        block_size=count(data, "hash_id_block_size", at),
    )
    if not stated.file:
        raise ResultImportError(f"{at}.source.path: expected the trace file's path")
    return replayed_trace(stated, facts, _replay_findings(benchmark, totals))


def _moment(benchmark: dict[str, Any], key: str, where: str) -> dt.datetime:
    seconds = number(benchmark, key, where)
    if seconds is None:
        raise ResultImportError(f"{where}: {key}: missing (epoch seconds)")
    try:
        return dt.datetime.fromtimestamp(seconds, dt.UTC)
    except (OverflowError, OSError, ValueError):
        raise ResultImportError(f"{where}: {key}: {seconds!r} is not a time") from None


def measure_guidellm(files: Sequence[Path], facts: ImportFacts) -> Measured:
    """What one or more GuideLLM reports measured; a load point per benchmark."""
    benchmarks: list[tuple[str, dict[str, Any]]] = []
    traces: list[ImportedReplay | None] = []
    versions = []
    # Report version 1 states the request format in its top-level `args`, not in the backend.
    report_formats: dict[str, Any] = {}
    for path in files:
        report = read_guidellm_report(path)
        versions.append((str(path), (report.get("metadata") or {}).get("guidellm_version")))
        report_format = (mapping(report, "args", str(path)) or {}).get("request_format")
        for index, benchmark in enumerate(report["benchmarks"]):
            where = f"{path}: benchmarks[{index}]"
            if not isinstance(benchmark, dict):
                raise ResultImportError(f"{where}: expected an object")
            benchmarks.append((where, benchmark))
            traces.append(_trace_run((str(path), report), benchmark, where, facts))
            report_formats[where] = report_format
    if facts.slo_given:
        raise ResultImportError(
            "GuideLLM reports do not say which requests met latency limits, so the --slo-* "
            "flags cannot be honoured; drop them"
        )
    backends = [
        (where, mapping(mapping(benchmark, "config", where), "backend", f"{where}.config") or {})
        for where, benchmark in benchmarks
    ]
    served_model = same([(where, backend.get("model")) for where, backend in backends], "model")
    request_format = same(
        [
            (where, backend.get("request_format") or report_formats[where])
            for where, backend in backends
        ],
        "request_format",
    )
    measured = measured_runs(
        GUIDELLM_TOOL,
        benchmarks,
        traces,
        _point,
        _moment,
        served_model=served_model,
        api=_API.get(str(request_format)),
    )
    tool_version = same(versions, "guidellm_version")
    return dataclasses.replace(
        measured, tool_version=tool_version if isinstance(tool_version, str) else None
    )


GUIDELLM_FORMAT = ImportFormat(
    name="guidellm",
    description="a GuideLLM benchmarks.json report",
    shape="an object with `metadata` and `benchmarks`",
    looks_like=looks_like_guidellm,
    measure=measure_guidellm,
    command_why="the exact `guidellm benchmark …` command line",
)
