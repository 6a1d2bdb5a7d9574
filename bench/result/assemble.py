"""Assemble, validate and write the registry result of a run.

`build_result` turns the run's summaries, telemetry, vLLM's startup figures and the host's
fingerprint into a `registry.models.Result` (identity, SLO, points, startup, provenance); the
identity comes from `bench.result.deployment.identity_data`, as an import's does. How
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

Its parts: `points` (a point's mapping, `PointTelemetry`), `bench.workloads.prompts.identity`
(`workload_data`), `provenance` (`Provenance`, the `source`) and `raw_records`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from infermeter.bench.errors import BenchError
from infermeter.bench.launch.vllm_log import StartupFigures
from infermeter.bench.result.deployment import (
    Deployment,  # build_result's parameter type
    identity_data,
)
from infermeter.bench.result.points import PointTelemetry, mark_server_at_slo, point_data, rounded
from infermeter.bench.result.provenance import Provenance, source_data
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.bench.workloads.identity import workload_data
from infermeter.registry.builder import ResultBuildError
from infermeter.registry.builder import build_result as registry_build_result
from infermeter.registry.input_files import LIMITS_BYTES, MIB
from infermeter.registry.models import ModelEntry, Result
from infermeter.registry.store import dumps_result, write_text_atomic
from infermeter.registry.validate import check_result

__all__ = ["ResultError", "build_result", "validate_result", "write_result"]


class ResultError(BenchError):
    """The assembled result is not valid (a bug, or figures the registry refuses)."""


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
            deployment, workload_data(config, run.api, run.dataset_sha256, run.trace)
        ),
        "slo": {"ttft_ms": slo.ttft_ms, "tpot_ms": slo.tpot_ms, "e2e_ms": slo.e2e_ms},
        "points": [
            point_data(
                summary,
                telemetry[i] if i < len(telemetry) else None,
                config.burstiness,
                config.max_concurrency,
            )
            for i, summary in enumerate(run.points)
        ],
        "startup": None,
        "source": source_data(provenance, deployment, complete=not run.incomplete),
    }
    mark_server_at_slo(run, data["points"])
    if startup is not None:
        data["startup"] = {
            "weights_gib": startup.weights_gib,
            "kv_cache_tokens": startup.kv_cache_tokens,
            "kv_cache_gib": rounded(startup.available_kv_cache_gib, 4),
            "block_size": startup.block_size,
            "max_concurrency": startup.max_concurrency,
            "cuda_graph_gib": startup.cuda_graph_gib,
            "startup_s": rounded(startup.startup_s, 2),
        }
    return _within_file_limit(data)


def _within_file_limit(data: dict[str, Any]) -> Result:
    """The result of `data`; when each request's figures would take the file over the
    registry's limit, without them, each point saying so (answers at a reader's SLO then fall
    back to the point's percentiles)."""
    result = _built(data)
    size = len(dumps_result(result).encode("utf-8"))
    if size <= LIMITS_BYTES["result file"] or not any(
        point.get("request_figures") for point in data["points"]
    ):
        return result
    verdict = {
        "code": "request_figures_left_out",
        "message": f"each request's figures were left out: with them the result file is "
        f"{size / MIB:.1f} MiB, above the limit of "
        f"{LIMITS_BYTES['result file'] / MIB:g} MiB",
    }
    for point in data["points"]:
        if point.pop("request_figures", None):
            point["validity"] = [*point["validity"], verdict]
    return _built(data)


def _built(data: dict[str, Any]) -> Result:
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
    (`bench.result.model_entry`)."""
    extra = None
    if model_entry is not None:
        entry = ModelEntry.model_validate(dict(model_entry))
        extra = {entry.id: entry}
    report = check_result(result, extra_models=extra)
    return [f"{problem.path}: {problem.message}" for problem in report.problems]


def write_result(result: Result, output: Path) -> None:
    """Write the result file atomically, in canonical form."""
    write_text_atomic(output, dumps_result(result))
