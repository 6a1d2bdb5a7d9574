"""Assemble, validate and write the registry result of a run.

`build_result` turns the run's summaries, telemetry, vLLM's startup figures and the host's
fingerprint into a `registry.models.Result` (identity, SLO, points, startup, provenance); the
identity comes from `bench.deployment.identity_data`, as an import's does. How
the bench's figures map onto the result format:
- lengths: a log-normal (median m, sigma s) is stored by its mean m·e^(s²/2) and standard
  deviation mean·√(e^(s²) − 1) in tokens; a run that overrides the profile's lengths, uses a
  dataset or shares a prompt prefix is profile `custom`;
- a shared prompt prefix (`--shared-prefix-tokens`) is named in `workload.dataset`, the only
  place the workload identity has for how prompts were made;
- failures: the client's `connection` failures count as `disconnect`, `empty_output` (a stream
  that ended without a token) as `server_error`, so the kinds add up to `failed`;
- queue time: only the mean (vLLM's histogram has no exact percentiles); its `n` is left out
  because vLLM's counter also includes the point's warm-up requests;
- a point in which the engine preempted sequences gets a `preemptions` verdict;
- without NVML the host's GPU is the catalog GPU given with `--gpu` (`gpu_sku` says so).

The result is made by `registry.builder.build_result`, the one builder of every result (live
runs, importers, harvesters), in memory; `validate_result` runs the registry's checks on it in
memory (`registry.validate.check_result`); `write_result` writes the file atomically
(canonical JSON, content id) and, on request, every request's raw record as gzipped JSON lines
beside it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import importlib.metadata
import json
import math
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.client import ErrorKind, RequestRecord
from bench.conversation import DEFAULT_THINK_TIME_S, DEFAULT_TURNS
from bench.deployment import Deployment as Deployment  # build_result's parameter type
from bench.deployment import identity_data
from bench.engine_metrics import EngineWindow
from bench.engines import ServerFacts
from bench.errors import BenchError
from bench.host import ClientInfo, HostInfo
from bench.metrics import Distribution, PointSummary
from bench.runner import MULTITURN, RunConfig, RunResult
from bench.search import SLO_PERCENTILE
from bench.telemetry import GpuWindow
from bench.timeline import point_timeline
from bench.vllm_log import StartupFigures
from bench.workloads import LengthDistribution, get_profile
from registry.builder import ResultBuildError
from registry.builder import build_result as registry_build_result
from registry.models import ModelEntry, Result
from registry.store import dumps_result, write_text_atomic
from registry.validate import check_result

TOOL_NAME = "infermeter"
_CODE_ROOT = Path(__file__).resolve().parent.parent
"""The folder the package's code sits in: a checkout for an editable install, else
site-packages (the commit is then unknown, the version says what ran)."""
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


class ResultError(BenchError):
    """The assembled result is not valid (a bug, or figures the registry refuses)."""


@dataclass(frozen=True)
class PointTelemetry:
    """A point's GPU and engine figures (each None when not available)."""

    gpu: GpuWindow | None = None
    engine: EngineWindow | None = None


@dataclass(frozen=True)
class Provenance:
    """Who and what measured, when, and on which host."""

    command: str
    started_at: dt.datetime
    finished_at: dt.datetime
    submitter: str
    host: HostInfo
    server_command: str | None = None
    client: ClientInfo | None = None
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


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _length(distribution: LengthDistribution) -> dict[str, Any]:
    if distribution.kind == "fixed":
        return {"kind": "fixed", "value": int(distribution.a)}
    if distribution.kind == "uniform":
        return {"kind": "uniform", "min": int(distribution.a), "max": int(distribution.b)}
    if distribution.kind == "normal":
        mean, stddev = distribution.a, distribution.b
    else:
        mean = distribution.a * math.exp(distribution.b**2 / 2)
        stddev = mean * math.sqrt(math.expm1(distribution.b**2))
    return {
        "kind": distribution.kind,
        "mean": round(mean, 3),
        "stddev": round(stddev, 3),
        "min": distribution.minimum,
        "max": distribution.maximum,
    }


def workload_data(
    config: RunConfig, api: str, dataset_sha256: str | None = None
) -> dict[str, Any]:
    """The result's `identity.workload` for a run configuration; `dataset_sha256`: that of
    the `--dataset` file the run read."""
    profile = get_profile(config.profile)
    overridden = (config.input_len, config.output_len, config.dataset)
    custom = any(overridden) or config.shared_prefix_tokens > 0
    dataset_lengths = {"kind": "dataset"}
    if config.dataset is not None:
        input_len = dataset_lengths
        output_len = _length(config.output_len) if config.output_len else dataset_lengths
    else:
        input_len = _length(config.input_len or profile.input_len)
        output_len = _length(config.output_len or profile.output_len)
    return {
        "profile": "custom" if custom else profile.name,
        "input_len": input_len,
        "output_len": output_len,
        "dataset": f"sharegpt ({config.dataset.name})"
        if config.dataset
        else f"random words, every prompt starting with the same "
        f"{config.shared_prefix_tokens}-token prefix"
        if config.shared_prefix_tokens
        else None,
        "dataset_sha256": dataset_sha256 if config.dataset else None,
        "seed": config.seed,
        "api": api,
    } | _multiturn_workload(config)


def _multiturn_workload(config: RunConfig) -> dict[str, Any]:
    """The multi-turn fields of `identity.workload`: what each session sent (none for a
    single-turn profile)."""
    if config.profile != MULTITURN:
        return {}
    data: dict[str, Any] = {
        "profile": MULTITURN,
        "think_time_s": DEFAULT_THINK_TIME_S
        if config.think_time_s is None
        else config.think_time_s,
    }
    if config.dataset is not None:
        data["turns"] = {"kind": "dataset"}
        data["dataset"] = (
            f"conversations of {config.dataset.name} (ShareGPT or OpenAI messages), every turn "
            "sending the whole history with the server's own replies"
        )
    else:
        data["turns"] = _length(config.turns or DEFAULT_TURNS)
        data["dataset"] = (
            "synthetic sessions of random words, every turn sending the whole history with the "
            "server's own replies"
        )
    return data


def _latency(distribution: Distribution) -> dict[str, Any]:
    if distribution.n == 0:
        return {"n": 0}
    return {
        "n": distribution.n,
        **{
            name: _round(getattr(distribution, name))
            for name in ("mean", "p50", "p90", "p95", "p99", "max")
        },
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
            "gpu_utilization_pct_mean": _round(gpu.gpu_utilization_pct_mean, 2),
            "memory_used_bytes_max": gpu.memory_used_bytes_max,
            "power_w_mean": _round(gpu.power_w_mean, 2),
            "energy_j": _round(gpu.energy_j, 2),
            "sm_clock_mhz_mean": _round(gpu.sm_clock_mhz_mean, 1),
            "temperature_c_max": gpu.temperature_c_max,
        }
    if telemetry.engine is not None:
        engine = telemetry.engine
        data["engine"] = {
            "kv_cache_usage_pct_mean": _round(engine.kv_cache_usage_pct_mean, 2),
            "kv_cache_usage_pct_max": _round(engine.kv_cache_usage_pct_max, 2),
            "preemptions": engine.preemptions,
            "prefix_cache_hit_rate": _round(engine.prefix_cache_hit_rate, 4),
        }
    return data or None


def _point(
    summary: PointSummary,
    telemetry: PointTelemetry | None,
    burstiness: float,
    cap: int | None = None,
) -> dict[str, Any]:
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
    queue = None
    if engine is not None and engine.queue_ms_mean is not None:
        queue = {"mean": _round(engine.queue_ms_mean)}
    return {
        "load": _load(summary, burstiness, cap),
        "duration_s": _round(summary.window_s) if summary.window_s > 0 else None,
        "concurrency_mean": _round(summary.achieved_concurrency_mean),
        "requests": {
            "sent": summary.completed + summary.failed,
            "completed": summary.completed,
            "failed": summary.failed,
            "accepted": summary.accepted_requests,
        },
        "failures": _failures(summary),
        "tokens": {
            "input": summary.input_tokens,
            "output": summary.output_tokens,
            "accepted_output": summary.accepted_output_tokens,
        },
        "throughput": {
            "requests_per_s": _round(summary.request_throughput),
            "output_tokens_per_s": _round(summary.output_token_throughput),
            "total_tokens_per_s": _round(summary.total_token_throughput),
            "accepted_output_tokens_per_s": _round(summary.accepted_output_token_throughput),
        },
        "ttft_ms": _latency(summary.ttft_ms),
        "itl_ms": _latency(summary.itl_ms),
        "tpot_ms": _latency(summary.tpot_ms),
        "e2e_ms": _latency(summary.e2e_ms),
        "queue_ms": queue,
        "telemetry": _telemetry(telemetry),
        "turns": [
            {
                "turn": turn.turn,
                "requests": turn.requests,
                "input_tokens_mean": _round(turn.input_tokens_mean, 1),
                "ttft_ms": _latency(turn.ttft_ms),
            }
            for turn in summary.turns
        ]
        or None,
        "validity": verdicts,
    }


def _timestamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _host(host: HostInfo, deployment: Deployment) -> dict[str, Any]:
    gpu_sku = host.gpu_sku or f"{deployment.gpu_id} (given with --gpu; no NVIDIA driver read)"
    return {
        "gpu_sku": gpu_sku,
        "gpu_count": host.gpu_count or deployment.gpus_per_node or deployment.gpu_count,
        "form_factor": deployment.form_factor,
        "driver": host.driver,
        "cuda": host.cuda,
        "cpu": host.cpu,
        "ram_bytes": host.ram_bytes,
        "os": host.os,
        "vllm_version": host.vllm_version,
        "torch_version": host.torch_version,
        "telemetry_gpu_indices": list(host.telemetry_gpu_indices)
        if host.telemetry_gpu_indices is not None
        else None,
    }


def _server(facts: ServerFacts | None) -> dict[str, Any] | None:
    if facts is None:
        return None
    return {**dataclasses.asdict(facts), "read_from": list(facts.read_from)}


def _mark_server_at_slo(run: RunResult, points: list[dict[str, Any]]) -> None:
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


def build_result(
    run: RunResult,
    config: RunConfig,
    deployment: Deployment,
    telemetry: Sequence[PointTelemetry | None],
    startup: StartupFigures | None,
    provenance: Provenance,
) -> Result:
    """The registry result of a run with at least one finished point; raises ResultError."""
    if not run.points:
        raise ResultError("no load point finished, so there is no result to write")
    slo = config.slo
    data: dict[str, Any] = {
        "identity": identity_data(
            deployment, workload_data(config, run.api, run.dataset_sha256)
        ),
        "slo": {"ttft_ms": slo.ttft_ms, "tpot_ms": slo.tpot_ms, "e2e_ms": slo.e2e_ms},
        "points": [
            _point(
                summary,
                telemetry[i] if i < len(telemetry) else None,
                config.burstiness,
                config.max_concurrency,
            )
            for i, summary in enumerate(run.points)
        ],
        "startup": None,
        "source": {
            "kind": "measured",
            "tool": {"name": TOOL_NAME, "version": tool_version(), "commit": tool_commit()},
            "command": provenance.command,
            "server_command": provenance.server_command,
            "host": _host(provenance.host, deployment),
            "client": dataclasses.asdict(provenance.client) if provenance.client else None,
            "server": _server(provenance.server),
            "started_at": _timestamp(provenance.started_at),
            "finished_at": _timestamp(provenance.finished_at),
            "submitter": provenance.submitter,
            "complete": not run.incomplete,
        },
    }
    _mark_server_at_slo(run, data["points"])
    if startup is not None:
        data["startup"] = {
            "weights_gib": startup.weights_gib,
            "kv_cache_tokens": startup.kv_cache_tokens,
            "max_concurrency": startup.max_concurrency,
            "cuda_graph_gib": startup.cuda_graph_gib,
            "startup_s": _round(startup.startup_s, 2),
        }
    try:
        return registry_build_result(data)
    except ResultBuildError as error:
        problems = "; ".join(
            f"{problem.path}: {problem.message}" if problem.path else problem.message
            for problem in error.problems
        )
        raise ResultError(f"the result is not valid: {problems}", "--output") from None


def validate_result(result: Result, model_entry: Mapping[str, Any] | None = None) -> list[str]:
    """Every problem `registry validate` would find in the result's file, checked in memory;
    with `model_entry`, judged against the catalogs with that model added
    (`bench.model_entry`)."""
    extra = None
    if model_entry is not None:
        entry = ModelEntry.model_validate(dict(model_entry))
        extra = {entry.id: entry}
    report = check_result(result, extra_models=extra)
    return [f"{problem.path}: {problem.message}" for problem in report.problems]


def raw_records_path(output: Path) -> Path:
    """Where the raw records of the result at `output` go: `<stem>.requests.jsonl.gz`."""
    return output.with_name(output.stem + ".requests.jsonl.gz")


def write_raw_records(
    path: Path, points: Sequence[tuple[int, bool, Sequence[RequestRecord]]]
) -> None:
    """Every request's record as one JSON line, gzipped, written atomically, then each
    point's timeline (`bench.timeline`), one line per second.

    `points` holds (point number, kept, records); a point that was not kept (cut short by a
    crash or Ctrl-C) is in the file with `"kept": false`. Each line's `kind` says what it is:
    `request` (the record's fields) or `second` (the timeline's fields).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
    )
    try:
        with (
            os.fdopen(descriptor, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as stream,
        ):
            for number, kept, records in points:
                lines = [
                    {"kind": "request", **dataclasses.asdict(record)} for record in records
                ] + [{"kind": "second", **second.as_json()} for second in point_timeline(records)]
                for line in lines:
                    line = {"point": number, "kept": kept, **line}
                    stream.write(json.dumps(line, sort_keys=True).encode() + b"\n")
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_result(result: Result, output: Path) -> None:
    """Write the result file atomically, in canonical form."""
    write_text_atomic(output, dumps_result(result))
