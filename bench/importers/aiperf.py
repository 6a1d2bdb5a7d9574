"""AIPerf's `profile_export_aiperf.json` (`aiperf profile`; one file per run).

Followed: the export schema 1.5 (ai-dynamo/aiperf docs/reference/json-export-schema.md and
src/aiperf/common/models/export_models.py, commit 896729cf; profiling phases from
src/aiperf/config/phases.py), the 0.2–0.x layout without `schema_version`, and the AIPerf 0.1
layout (v0.1.1, commit db4f6397: aiperf/exporters/json_exporter.py, loadgen_config.py). Since
0.2 every metric is a top-level block named by its tag, `{unit, avg, p1…p99, min, max, std}`,
plus `count` and `sum` on per-record metrics since schema 1.1; AIPerf 0.1 nests the blocks
under `records` (each with `tag` and `header`) and tags TTFT `ttft`, TTST `ttst`
(tests/data/importers/real/ holds a file of each). `unit` is authoritative: times are
converted from ns, us, ms or sec to ms (durations to seconds).

- `time_to_first_token` → ttft_ms, `request_latency` → e2e_ms, `inter_token_latency` (per
  request: (latency − TTFT) / (output tokens − 1)) → tpot_ms, `inter_chunk_latency` (every gap
  between stream chunks) → itl_ms: avg → mean, p50/p90/p95/p99, max, count → n.
- `benchmark_duration` → duration_s; `request_count` → completed; `error_request_count` (or the
  counts in `error_summary`) → failed; `total_isl`/`total_osl` → tokens; `request_throughput`,
  `output_token_throughput`, `total_token_throughput` (AIPerf 0.8 and later) → throughput.
- `good_request_count` → accepted, under AIPerf's --goodput limits: stated in the file as
  `input_config.slos` (AIPerf 0.11 and later; `time_to_first_token`, `inter_token_latency`,
  `request_latency` in ms → the SLO's TTFT, TPOT and E2E limits), else restated by the
  --slo-* flags; flags that contradict the file are refused.
- The load comes from `input_config`: its profiling phase (`phases`, current AIPerf) or
  `loadgen` (AIPerf 0.x): concurrency → closed; poisson (or gamma) or constant rate → open, with
  concurrency as the cap. User-centric phases are refused.
- A Mooncake trace replay (a `datasets[]` entry of `format` mooncake_trace, or AIPerf 0.x's
  `input.custom_dataset_type`, sent by a `fixed_schedule` phase): the workload is the trace's
  identity (`bench.importers.trace_runs`, the file given with --trace), its speed
  `synthesis.speedup_ratio`, its block size the dataset's `block_size` (else the trace's); a
  replay AIPerf reshaped (other `synthesis` options), started late (`start_offset`) or sent at a
  concurrency is refused. AIPerf's `replay_sched_degraded` flag becomes a `client_send_lag`
  verdict.
- The command: `run_info.cli_command` (schema 1.5), `input_config.artifacts.cli_command`
  (AIPerf 0.8) or `input_config.cli_command` (AIPerf 0.1 and 0.2); the seed from
  `run_info.random_seed` or `input_config.random_seed` (AIPerf 0.8).
- `start_time`/`end_time`: AIPerf writes `datetime.fromtimestamp(…)`, the host's local time
  without an offset, so --timezone is needed unless the stamps carry one.
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
    goodput_matches_slo,
    mapping,
    number,
    option_name,
    request_counts,
    same,
    scaled,
    timezone_of,
)
from infermeter.bench.importers.trace_runs import (
    ImportedReplay,
    TraceReplayed,
    measured_runs,
    replayed_trace,
)
from infermeter.registry.builder import unchecked
from infermeter.registry.models import (
    LatencyStats,
    Load,
    LoadPoint,
    Throughput,
    TokenCounts,
    Verdict,
)

AIPERF_TOOL = "aiperf"
_MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "sec": 1000.0, "s": 1000.0}
_MARKERS = ("request_throughput", "request_count", "time_to_first_token", "request_latency")
_PERCENTILES = ("p50", "p90", "p95", "p99")
_LATENCIES = {
    "time_to_first_token": "ttft_ms",
    "inter_token_latency": "tpot_ms",
    "inter_chunk_latency": "itl_ms",
    "request_latency": "e2e_ms",
}
_API = {"chat": "chat", "completions": "completions"}
# AIPerf's goodput metric tags (ms) → the registry SLO's limits (ImportFacts fields).
_SLO_FIELDS = {
    "time_to_first_token": "slo_ttft_ms",
    "inter_token_latency": "slo_tpot_ms",
    "request_latency": "slo_e2e_ms",
}
# AIPerf 0.1's tags for what 0.2 and later call by these names.
_V01_TAGS = {"ttft": "time_to_first_token", "ttst": "time_to_second_token"}


def _flatten_v01(export: dict[str, Any]) -> dict[str, Any]:
    """An AIPerf 0.1 export (metric blocks under `records`) in the layout of 0.2 and later."""
    records = export.get("records")
    if not isinstance(records, dict) or any(tag in export for tag in _MARKERS):
        return export
    flat = {key: value for key, value in export.items() if key != "records"}
    for tag, block in records.items():
        flat[_V01_TAGS.get(tag) or tag] = block
    return flat


def looks_like_aiperf(values: Sequence[Any]) -> bool:
    """Whether parsed JSON values are one AIPerf summary export."""
    if len(values) != 1 or not isinstance(values[0], dict):
        return False
    export = _flatten_v01(values[0])
    return "aiperf_version" in export or any(
        isinstance(export.get(tag), dict) and "unit" in export[tag] for tag in _MARKERS
    )


def read_aiperf_export(path: Path) -> dict[str, Any]:
    """The summary export in `path`."""
    (export,) = AIPERF_FORMAT.read(path)
    return _flatten_v01(export)


def _block(export: dict[str, Any], tag: str, units: Sequence[str], where: str) -> dict[str, Any]:
    block = mapping(export, tag, where)
    if block is None:
        return {}
    unit = block.get("unit")
    if unit not in units:
        raise ResultImportError(f"{where}: {tag}.unit: expected {' or '.join(units)}, got {unit!r}")
    return block


def _scalar(export: dict[str, Any], tag: str, units: Sequence[str], where: str) -> float | None:
    return number(_block(export, tag, units, where), "avg", f"{where}: {tag}")


def _whole(export: dict[str, Any], tag: str, units: Sequence[str], where: str) -> int | None:
    return count(_block(export, tag, units, where), "avg", f"{where}: {tag}")


def _latency(export: dict[str, Any], tag: str, where: str) -> LatencyStats | None:
    block = _block(export, tag, tuple(_MS_PER_UNIT), where)
    if not block:
        return None
    scale, at = _MS_PER_UNIT[block["unit"]], f"{where}: {tag}"
    values = {"mean": number(block, "avg", at)}
    values |= {name: number(block, name, at) for name in _PERCENTILES}
    values["max"] = number(block, "max", at)
    stats: dict[str, Any] = {
        name: scaled(value, scale) for name, value in values.items() if value is not None
    }
    samples = count(block, "count", at)
    if samples == 0 or not stats:
        return None
    if samples is not None:
        stats["n"] = samples
    return unchecked(LatencyStats, **stats)


def _ramp_verdicts(phase: dict[str, Any]) -> list[Verdict]:
    ramps = [name for name in ("concurrency_ramp", "rate_ramp") if phase.get(name) is not None]
    return (
        [
            unchecked(
                Verdict,
                code="ramp-up",
                message=f"AIPerf ramped the load up ({', '.join(ramps)}); "
                "the figures include the ramp",
            )
        ]
        if ramps
        else []
    )


def _phase_load(phases: Any, where: str) -> tuple[Load, list[Verdict]]:
    if isinstance(phases, dict):
        named = list(phases.items())
    elif isinstance(phases, list):
        named = [
            (phase.get("name") if isinstance(phase, dict) else None, phase) for phase in phases
        ]
    else:
        raise ResultImportError(f"{where}.phases: expected an object or a list")
    profiling = [
        phase
        for name, phase in named
        if isinstance(phase, dict)
        and (phase.get("kind") or phase.get("name") or name) == "profiling"
    ]
    if len(profiling) != 1:
        raise ResultImportError(
            f"{where}.phases: expected one profiling phase, found {len(profiling)}; import the "
            "phases/<name>/profile_export_aiperf.json of each phase separately"
        )
    phase = profiling[0]
    kind, at = phase.get("type"), f"{where}.phases.profiling"
    concurrency = count(phase, "concurrency", at)
    verdicts = _ramp_verdicts(phase)
    if kind == "concurrency":
        # ConcurrencyPhase.concurrency defaults to 1, and the export leaves defaults out.
        return unchecked(Load, arrival="closed", concurrency=concurrency or 1), verdicts
    if kind in ("poisson", "gamma", "constant"):
        if phase.get("rate_series") is not None:
            raise ResultImportError(f"{at}: a rate series has no single load to import")
        rate = number(phase, "rate", at)
        if not rate or rate < 0:
            raise ResultImportError(f"{at}.rate: a {kind} phase needs a rate above 0")
        load: dict[str, Any] = {
            "arrival": "constant" if kind == "constant" else "poisson",
            "request_rate": rate,
        }
        smoothness = number(phase, "smoothness", at) if kind == "gamma" else None
        if smoothness is not None and smoothness != 1.0:
            load |= {"arrival": "gamma", "burstiness": smoothness}
        if concurrency:
            load["concurrency"] = concurrency
        return unchecked(Load, **load), verdicts
    raise ResultImportError(
        f"{at}.type: {kind!r} phases cannot be imported; expected concurrency, poisson, gamma "
        "or constant (the registry's loads are closed, offline or an arrival rate)"
    )


def _load(config: dict[str, Any], where: str) -> tuple[Load, list[Verdict]]:
    if config.get("phases") is not None:
        return _phase_load(config["phases"], where)
    loadgen = mapping(config, "loadgen", where) or {}
    at = f"{where}.loadgen"
    concurrency = count(loadgen, "concurrency", at)
    rate = number(loadgen, "request_rate", at)
    # LoadGeneratorDefaults.REQUEST_RATE_MODE is poisson; the export leaves defaults out.
    mode = str(loadgen.get("request_rate_mode") or "poisson").lower()
    if rate is not None:
        if mode != "poisson" or rate <= 0:
            raise ResultImportError(
                f"{at}: request_rate_mode {mode!r} at rate {rate:g} cannot be imported; the "
                "registry's open loads are poisson or gamma"
            )
        load: dict[str, Any] = {"arrival": "poisson", "request_rate": rate}
        if concurrency:
            load["concurrency"] = concurrency
        return unchecked(Load, **load), []
    if concurrency:
        return unchecked(Load, arrival="closed", concurrency=concurrency), []
    raise ResultImportError(
        f"{where}: states neither a profiling phase nor loadgen.concurrency or request_rate"
    )


def _served_model(config: dict[str, Any], where: str) -> Any:
    names: list[Any] = []
    models = config.get("models")
    if isinstance(models, dict) and isinstance(models.get("items"), list):
        names = [item.get("name") if isinstance(item, dict) else item for item in models["items"]]
    elif isinstance(models, list):
        names = [item.get("name") if isinstance(item, dict) else item for item in models]
    endpoint = config.get("endpoint")
    if not names and isinstance(endpoint, dict) and isinstance(endpoint.get("model_names"), list):
        names = endpoint["model_names"]
    if len(names) > 1:
        raise ResultImportError(
            f"{where}: the run served several models ({', '.join(map(str, names))}); "
            "a result is one model"
        )
    return names[0] if names else None


def _moment(export: dict[str, Any], key: str, where: str, timezone: str | None) -> dt.datetime:
    """The export's time `key`; one without an offset is in `timezone` (UTC while --timezone is
    not given: `_local_time_why` has the import refuse it then, with every other missing flag)."""
    moment = _stamp(export, key, where)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC if timezone is None else timezone_of(timezone))
    return moment


def _stamp(export: dict[str, Any], key: str, where: str) -> dt.datetime:
    stamp = export.get(key)
    try:
        return dt.datetime.fromisoformat(str(stamp))
    except ValueError:
        raise ResultImportError(
            f"{where}: {key}: expected an ISO 8601 time, got {stamp!r}"
        ) from None


def _local_time_why(exports: Sequence[tuple[str, dict[str, Any]]]) -> str | None:
    """Why --timezone is needed: the first start or end time written without an offset."""
    for where, export in exports:
        for key in ("start_time", "end_time"):
            if _stamp(export, key, where).tzinfo is None:
                return (
                    f"{where}: {key} is the benchmark host's local time (AIPerf writes it "
                    "without an offset)"
                )
    return None


def _failed(export: dict[str, Any], where: str) -> int | None:
    failed = _whole(export, "error_request_count", ("requests",), where)
    summary = export.get("error_summary")
    if failed is None and isinstance(summary, list):
        failed = sum(
            count(item, "count", f"{where}: error_summary") or 0
            for item in summary
            if isinstance(item, dict)
        )
    return failed


def _point(
    export: dict[str, Any], where: str, slo_given: bool, trace: ImportedReplay | None = None
) -> LoadPoint:
    config = mapping(export, "input_config", where) or {}
    if trace is None:
        load, verdicts = _load(config, f"{where}: input_config")
    else:
        load, verdicts = trace.load, _replay_verdicts(export, where)
    completed = _whole(export, "request_count", ("requests",), where)
    failed = _failed(export, where)
    duration = _scalar(export, "benchmark_duration", tuple(_MS_PER_UNIT), where)
    if duration == 0:
        raise ResultImportError(f"{where}: benchmark_duration: expected a number > 0, got 0")
    if duration is not None:
        duration = scaled(duration, _MS_PER_UNIT[export["benchmark_duration"]["unit"]] / 1000.0)
    tokens = unchecked(
        TokenCounts,
        input=_whole(export, "total_isl", ("tokens",), where),
        output=_whole(export, "total_osl", ("tokens",), where),
    )
    throughput = unchecked(
        Throughput,
        requests_per_s=_scalar(export, "request_throughput", ("requests/sec",), where),
        output_tokens_per_s=_scalar(export, "output_token_throughput", ("tokens/sec",), where),
        total_tokens_per_s=_scalar(export, "total_token_throughput", ("tokens/sec",), where),
    )
    if export.get("was_cancelled") is True:
        cancelled = "the AIPerf run was cancelled before it finished"
        verdicts = [*verdicts, unchecked(Verdict, code="cancelled", message=cancelled)]
    good = _whole(export, "good_request_count", ("requests",), where)
    goodput_matches_slo(good is not None, slo_given, where, "good_request_count", "AIPerf")
    latencies = {}
    if completed:
        latencies = {field: _latency(export, tag, where) for tag, field in _LATENCIES.items()}
    return unchecked(
        LoadPoint,
        load=load,
        duration_s=duration,
        requests=request_counts(completed, failed, good if slo_given else None),
        tokens=tokens,
        throughput=throughput,
        validity=verdicts,
        **latencies,
    )


# AIPerf's synthesis options that reshape a trace (`SynthesisConfig`, src/aiperf/config/dataset/
# trace.py), with their no-op values: a run with any other value replayed another workload.
_RESHAPING = {
    "prefix_len_multiplier": 1.0,
    "prefix_root_multiplier": 1,
    "prompt_len_multiplier": 1.0,
    "output_len_multiplier": 1.0,
    "max_isl": None,
    "max_osl": None,
}


def _trace_dataset(config: dict[str, Any], where: str) -> tuple[str, dict[str, Any]] | None:
    """(where, dataset) of the Mooncake trace a run read: `datasets[i]` of `format`
    mooncake_trace (AIPerf 0.8 and later), or AIPerf 0.x's `input` with that
    `custom_dataset_type`; None when the run read none."""
    datasets = config.get("datasets")
    if isinstance(datasets, list):
        for index, dataset in enumerate(datasets):
            if isinstance(dataset, dict) and dataset.get("format") == "mooncake_trace":
                return f"{where}.datasets[{index}]", dataset
    legacy = config.get("input")
    if isinstance(legacy, dict) and legacy.get("custom_dataset_type") == "mooncake_trace":
        return f"{where}.input", {
            "path": legacy.get("file"),
            "fixed_schedule": legacy.get("fixed_schedule"),
            "start_offset": legacy.get("fixed_schedule_start_offset"),
        }
    return None


def _fixed_schedule(config: dict[str, Any], dataset: dict[str, Any], where: str) -> None:
    """Refuse a trace run that did not send the trace's requests at their timestamps, from
    its start: a trace workload here is a replay on the trace's own clock."""
    phases = config.get("phases")
    profiling = [
        phase
        for phase in (phases if isinstance(phases, list) else [])
        if isinstance(phase, dict) and (phase.get("kind") or phase.get("name")) == "profiling"
    ]
    kind = profiling[0].get("type") if len(profiling) == 1 else None
    timed = kind == "fixed_schedule" if phases is not None else dataset.get("fixed_schedule")
    if not timed:
        raise ResultImportError(
            f"{where}: AIPerf sent the trace's requests by {kind or 'its load generator'}, not "
            "at their timestamps (--fixed-schedule); only a replay on the trace's clock is a "
            "trace workload"
        )
    start = (profiling[0] if profiling else dataset).get("start_offset")
    if start:
        raise ResultImportError(
            f"{where}: the replay started {start} ms into the trace (start_offset); only a "
            "replay from the trace's start, cut after its first requests, can be imported"
        )


def _trace_stated(config: dict[str, Any], sent: int | None, where: str) -> TraceReplayed | None:
    """What the run's `input_config` says of the Mooncake trace it replayed; None for a run
    that replayed none."""
    found = _trace_dataset(config, where)
    if found is None:
        return None
    at, dataset = found
    _fixed_schedule(config, dataset, at)
    synthesis = mapping(dataset, "synthesis", at) or {}
    for name, neutral in _RESHAPING.items():
        if synthesis.get(name, neutral) != neutral:
            raise ResultImportError(
                f"{at}.synthesis.{name}: {synthesis[name]!r} reshaped the trace; only a replay "
                "of the trace as it is (speedup_ratio aside) is the trace's workload"
            )
    path = dataset.get("path")
    if not isinstance(path, str) or not path:
        raise ResultImportError(f"{at}.path: expected the trace file's path")
    return TraceReplayed(
        where=f"{at}.path",
        file=path,
        speed=number(synthesis, "speedup_ratio", f"{at}.synthesis") or 1.0,
        sent=sent,
        block_size=count(dataset, "block_size", at),
    )


def _replay_verdicts(export: dict[str, Any], where: str) -> list[Verdict]:
    """AIPerf's own judgement of its replay's schedule: `replay_sched_degraded` (its send lag,
    anchored on the least-late request, over 500 ms at p99)."""
    degraded = _scalar(export, "replay_sched_degraded", ("count",), where)
    if not degraded:
        return []
    p99 = _scalar(export, "replay_sched_lag_p99", ("ms",), where)
    lag = f" (p99 {p99:,.0f} ms after the least-late request)" if p99 is not None else ""
    return [
        unchecked(
            Verdict,
            code="client_send_lag",
            message=f"AIPerf fell behind the trace's schedule{lag}: its replay_sched_degraded "
            "flag is set, so the arrivals the server saw are not the trace's",
        )
    ]


def _trace_runs(
    exports: Sequence[tuple[str, dict[str, Any]]], facts: ImportFacts
) -> list[ImportedReplay | None]:
    """For each export, the trace it replayed (None where it replayed none)."""
    runs: list[ImportedReplay | None] = []
    for where, export in exports:
        config = mapping(export, "input_config", where) or {}
        completed = _whole(export, "request_count", ("requests",), where)
        failed = _failed(export, where)
        sent = None if completed is None else completed + (failed or 0)
        stated = _trace_stated(config, sent, f"{where}: input_config")
        if stated is None:
            runs.append(None)
            continue
        runs.append(replayed_trace(stated, facts))
    return runs


def _stated_slos(facts: ImportFacts, configs: Sequence[tuple[str, Any]]) -> dict[str, float | None]:
    """The goodput limits the files state (`input_config.slos`) by ImportFacts field, checked
    against the --slo-* flags; none when no file states them or one states a limit the
    registry's SLO cannot hold."""
    stated = same(
        [(where, mapping(config, "slos", f"{where}: input_config")) for where, config in configs],
        "input_config.slos",
    )
    if not stated or any(tag not in _SLO_FIELDS for tag in stated):
        return {}
    limits = {_SLO_FIELDS[tag]: number(stated, tag, "input_config.slos") for tag in _SLO_FIELDS}
    for field, value in limits.items():
        given = getattr(facts, field)
        if given is not None and given != value:
            stated_as = "states no such limit" if value is None else f"states {value:g}"
            raise ResultImportError(
                f"{given:g} contradicts the file's goodput limits (input_config.slos "
                f"{stated_as}); drop the flag or give the file's value",
                option_name(field),
            )
    return limits


def measure_aiperf(files: Sequence[Path], facts: ImportFacts) -> Measured:
    """What one or more AIPerf summary exports measured; a load point per file (run)."""
    exports = [(str(path), read_aiperf_export(path)) for path in files]
    configs = [(where, mapping(export, "input_config", where) or {}) for where, export in exports]
    slo = _stated_slos(facts, configs)
    facts = facts.model_copy(update=slo)
    served_model = same(
        [(where, _served_model(config, where)) for where, config in configs], "model"
    )
    endpoint_types = [
        (where, (mapping(config, "endpoint", where) or {}).get("type")) for where, config in configs
    ]
    api = same(endpoint_types, "endpoint type")
    versions = same(
        [(where, export.get("aiperf_version")) for where, export in exports], "aiperf_version"
    )
    measured = measured_runs(
        AIPERF_TOOL,
        exports,
        _trace_runs(exports, facts),
        lambda export, where, run: _point(export, where, facts.slo_given, run),
        lambda export, key, where: _moment(export, key, where, facts.timezone),
        served_model=served_model,
        api=_API.get(str(api)),
        tool_version=versions if isinstance(versions, str) else None,
    )
    why = _local_time_why(exports)
    if why is not None and facts.timezone is None:
        measured = dataclasses.replace(measured, needs={"timezone": why})
    run_infos = [mapping(export, "run_info", where) or {} for where, export in exports]
    artifacts = [mapping(config, "artifacts", where) or {} for where, config in configs]
    commands = [
        *(info.get("cli_command") for info in run_infos),
        *(artifact.get("cli_command") for artifact in artifacts),
        *(config.get("cli_command") for _, config in configs),
    ]
    seeds = {info.get("random_seed") for info in run_infos} | {
        config.get("random_seed") for _, config in configs
    }
    seeds -= {None}
    return dataclasses.replace(
        measured,
        command=next((c for c in commands if isinstance(c, str) and c), None)
        if len(exports) == 1
        else None,
        seed=next(iter(seeds)) if len(seeds) == 1 and isinstance(next(iter(seeds)), int) else None,
        complete=not any(export.get("was_cancelled") is True for _, export in exports),
        slo=slo,
        itl_per_chunk=True,  # its inter_chunk_latency
    )


AIPERF_FORMAT = ImportFormat(
    name="aiperf",
    description="an AIPerf profile_export_aiperf.json",
    shape="an object of metric blocks with `unit`",
    looks_like=looks_like_aiperf,
    measure=measure_aiperf,
    command_why="the exact `aiperf profile …` command line",
)
