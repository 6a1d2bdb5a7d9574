"""Assemble, validate and write the registry result of a run.

`build_result` turns the run's summaries, telemetry, vLLM's startup figures and the host's
fingerprint into a `registry.models.Result` (identity, SLO, points, startup, provenance); the
identity comes from `bench.result.deployment.identity`, as an import's does. How
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

The result is made of the registry's typed models (`Identity`, `LoadPoint`, `Slo`, `Startup`,
`MeasuredSource`) by `registry.builder.build_from_parts`, the one builder of every result (live
runs, importers, harvesters), in memory; `validate_result` runs the registry's checks on it in
memory (`registry.validate.check_result`); `write_result` writes the file atomically
(canonical JSON, content id) and, on request, every request's raw record as gzipped JSON lines
beside it.

Its parts: `points` (a `LoadPoint`, `PointTelemetry`), `bench.workloads.identity`
(`workload`), `provenance` (`Provenance`, the `source`) and `raw_records`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.bench.errors import BenchError
from infermeter.bench.launch.vllm_log import StartupFigures
from infermeter.bench.result.deployment import Deployment, identity
from infermeter.bench.result.points import PointTelemetry, at_slo, load_point, rounded
from infermeter.bench.result.provenance import Provenance, measured_source
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.bench.workloads.identity import workload
from infermeter.registry.builder import ResultBuildError, build_from_parts, unchecked
from infermeter.registry.input_files import LIMITS_BYTES, MIB
from infermeter.registry.models import (
    Identity,
    LoadPoint,
    MeasuredSource,
    ModelEntry,
    Result,
    Slo,
    Startup,
    Verdict,
)
from infermeter.registry.store import dumps_result, write_output
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
    points = [
        load_point(
            summary,
            telemetry[i] if i < len(telemetry) else None,
            config.burstiness,
            config.max_concurrency,
        )
        for i, summary in enumerate(run.points)
    ]
    parts = _Parts(
        identity=identity(deployment, workload(config, run.api, run.dataset_sha256, run.trace)),
        slo=config.slo,
        points=at_slo(run, points),
        startup=None if startup is None else _startup(startup),
        source=measured_source(provenance, deployment, complete=not run.incomplete),
    )
    return _within_file_limit(parts)


def _startup(startup: StartupFigures) -> Startup:
    return unchecked(
        Startup,
        weights_gib=startup.weights_gib,
        kv_cache_tokens=startup.kv_cache_tokens,
        kv_cache_gib=rounded(startup.available_kv_cache_gib, 4),
        block_size=startup.block_size,
        max_concurrency=startup.max_concurrency,
        cuda_graph_gib=startup.cuda_graph_gib,
        startup_s=rounded(startup.startup_s, 2),
    )


@dataclass(frozen=True)
class _Parts:
    """A run's result in the registry's typed models, before the builder checks it."""

    identity: Identity
    slo: Slo
    points: list[LoadPoint]
    startup: Startup | None
    source: MeasuredSource


def _within_file_limit(parts: _Parts) -> Result:
    """The result of `parts`; when each request's figures would take the file over the
    registry's limit, without them, each point saying so (answers at a reader's SLO then fall
    back to the point's percentiles)."""
    result = _built(parts)
    size = len(dumps_result(result).encode("utf-8"))
    if size <= LIMITS_BYTES["result file"] or not any(
        point.request_figures for point in parts.points
    ):
        return result
    verdict = unchecked(
        Verdict,
        code="request_figures_left_out",
        message=f"each request's figures were left out: with them the result file is "
        f"{size / MIB:.1f} MiB, above the limit of "
        f"{LIMITS_BYTES['result file'] / MIB:g} MiB",
    )
    points = [
        point.model_copy(update={"request_figures": None, "validity": [*point.validity, verdict]})
        if point.request_figures
        else point
        for point in parts.points
    ]
    return _built(dataclasses.replace(parts, points=points))


def _built(parts: _Parts) -> Result:
    try:
        return build_from_parts(
            parts.identity,
            parts.points,
            parts.source,
            slo=parts.slo,
            startup=parts.startup,
        )
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
    """Write the result file the user named (--output) in canonical form, as `write_output`
    writes: atomically, or straight into a device or pipe."""
    write_output(output, dumps_result(result))
