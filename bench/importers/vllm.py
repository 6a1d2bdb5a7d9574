"""`vllm bench serve --save-result` JSON.

A vLLM file holds the client's view of one run: load, duration, counts, throughput and latency
statistics (`mean_/median_/p<N>_<metric>_ms`; per request with `--save-detailed`). Each JSON
object in the file(s) becomes one load point (`--append-result` writes one object per line).
Only statistics the file states are filled in: vLLM's p99 goes to p99, its median to p50, p100
to max; nothing is interpolated. The keys follow `vllm/benchmarks/serve.py`.
"""

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
    lengths_needed,
    number,
    positive,
    request_counts,
    require_given,
    required,
    same,
    timezone_of,
    utc_stamp,
)
from infermeter.registry.builder import unchecked
from infermeter.registry.models import (
    LatencyStats,
    Load,
    LoadPoint,
    Throughput,
    TokenCounts,
)

VLLM_TOOL = "vllm-bench-serve"
_LATENCIES = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2el": "e2e_ms"}
_PERCENTILES = {"50": "p50", "90": "p90", "95": "p95", "99": "p99", "100": "max"}
COMMAND_WHY = "the exact `vllm bench serve …` command line"
_VLLM_NEEDS: dict[str, str | None] = {
    **dict.fromkeys(("gpu", "gpu_count", "model_id", "engine_version")),
    "command": COMMAND_WHY,
    "submitter": None,
    "timezone": "vLLM's `date` is local time of the benchmark host",
}
"""What a vLLM file never states (and the lengths, but beside a --trace), with what each flag
gives where `RUN_FACTS` does not say."""
_API = {"openai": "completions", "vllm": "completions", "openai-chat": "chat"}


def looks_like_vllm(values: Sequence[Any]) -> bool:
    """Whether parsed JSON values are `--save-result` objects."""
    return all(isinstance(value, dict) and "output_throughput" in value for value in values)


def read_vllm_objects(path: Path) -> list[dict[str, Any]]:
    """The JSON objects in one `--save-result` file (several when written by --append-result)."""
    return VLLM_FORMAT.read(path)


def _load(run: dict[str, Any], where: str) -> Load:
    if run.get("ramp_up_strategy") is not None:
        raise ResultImportError(f"{where}: a ramp-up run has no steady load point to import")
    concurrency = count(run, "max_concurrency", where)
    if concurrency == 0:
        raise ResultImportError(f"{where}: max_concurrency: expected a whole number >= 1, got 0")
    rate = run.get("request_rate")
    if rate in ("inf", None):
        if concurrency is None:
            # Every request was sent at once and the engine's batching decided: offline.
            if count(run, "num_prompts", where) is None:
                raise ResultImportError(
                    f"{where}: neither max_concurrency nor num_prompts is given"
                )
            return unchecked(Load, arrival="offline")
        return unchecked(Load, arrival="closed", concurrency=concurrency)
    request_rate = positive(run, "request_rate", where)
    burstiness = number(run, "burstiness", where)
    load: dict[str, Any] = {"arrival": "poisson", "request_rate": request_rate}
    if burstiness is not None and burstiness != 1.0:
        load |= {"arrival": "gamma", "burstiness": burstiness}
    if concurrency is not None:
        load["concurrency"] = concurrency
    return unchecked(Load, **load)


def _latency(run: dict[str, Any], metric: str, n: int | None, where: str) -> LatencyStats | None:
    stats: dict[str, Any] = {}
    mean = number(run, f"mean_{metric}_ms", where)
    if mean is not None:
        stats["mean"] = mean
    median = number(run, f"median_{metric}_ms", where)
    if median is not None:
        stats["p50"] = median
    for percentile, name in _PERCENTILES.items():
        value = number(run, f"p{percentile}_{metric}_ms", where)
        if value is not None:
            stats[name] = value
    if not stats:
        return None
    if n is not None:
        stats["n"] = n
    return unchecked(LatencyStats, **stats)


def _outcomes(run: dict[str, Any], where: str) -> tuple[int, int | None]:
    """Completed and failed requests: the file's counts, else those of --save-detailed's
    `errors` list (one per request sent, empty for a success). Without `completed` or that list,
    the latencies' n and whether they are enough for a percentile are unknown: refused."""
    errors = run.get("errors")
    listed = errors if isinstance(errors, list) else None
    completed = count(run, "completed", where)
    if completed is None and listed is not None:
        completed = sum(1 for error in listed if not error)
    if completed is None:
        raise ResultImportError(
            f"{where}: completed: missing (vllm bench serve writes it in every result; "
            "--save-detailed's errors list would give it too), so the latencies' n is unknown"
        )
    failed = count(run, "failed", where)
    if failed is None and listed is not None:
        failed = sum(1 for error in listed if error)
    return completed, failed


def _detailed_counts(run: dict[str, Any]) -> tuple[int | None, int | None]:
    """TPOT samples and ITL samples, from --save-detailed lists if present."""
    output_lens, itls = run.get("output_lens"), run.get("itls")
    if not isinstance(output_lens, list) or not isinstance(itls, list):
        return None, None
    # vLLM counts TPOT over successful requests of more than one token, ITL over their gaps.
    tpot_n = sum(1 for length in output_lens if isinstance(length, int) and length > 1)
    itl_n = sum(
        len(gaps)
        for gaps, length in zip(itls, output_lens, strict=False)
        if isinstance(gaps, list) and isinstance(length, int) and length > 0
    )
    return tpot_n, itl_n


def _point(run: dict[str, Any], where: str, slo_given: bool) -> LoadPoint:
    load = _load(run, where)
    duration = positive(run, "duration", where)
    completed, failed = _outcomes(run, where)
    tpot_n, itl_n = _detailed_counts(run)
    output_tokens = count(run, "total_output_tokens", where)
    output_throughput = number(run, "output_throughput", where)
    goodput = number(run, "request_goodput", where)
    if goodput is None:
        # benchmarks/benchmark_serving.py wrote the key with a stray colon (see the real
        # files in tests/data/importers/real/).
        goodput = number(run, "request_goodput:", where)
    goodput_matches_slo(goodput is not None, slo_given, where, "request_goodput", "vLLM")
    accepted = None
    if slo_given and goodput is not None and duration is not None:
        # vLLM stores good requests / duration; the count itself is a whole number.
        accepted = round(goodput * duration)
    tokens = unchecked(
        TokenCounts, input=count(run, "total_input_tokens", where), output=output_tokens
    )
    throughput = unchecked(
        Throughput,
        requests_per_s=number(run, "request_throughput", where),
        output_tokens_per_s=output_throughput,
        total_tokens_per_s=number(run, "total_token_throughput", where),
    )
    latencies = {}
    if completed:
        samples = {"ttft": completed, "e2el": completed, "tpot": tpot_n, "itl": itl_n}
        latencies = {
            field: _latency(run, metric, samples[metric], where)
            for metric, field in _LATENCIES.items()
        }
    return unchecked(
        LoadPoint,
        load=load,
        duration_s=duration,
        requests=request_counts(completed, failed, accepted),
        tokens=tokens,
        throughput=throughput,
        **latencies,
    )


def _window(runs: Sequence[tuple[str, dict[str, Any]]], zone: dt.tzinfo) -> tuple[str, str]:
    starts, ends = [], []
    for where, run in runs:
        stamp, duration = run.get("date"), positive(run, "duration", where)
        try:
            end = dt.datetime.strptime(str(stamp), "%Y%m%d-%H%M%S").replace(tzinfo=zone)
        except ValueError:
            raise ResultImportError(
                f"{where}: date: expected vLLM's YYYYMMDD-HHMMSS, got {stamp!r}"
            ) from None
        ends.append(end)
        # vLLM takes `date` after the run: the run started `duration` seconds before.
        starts.append(end - dt.timedelta(seconds=duration or 0.0))
    return utc_stamp(min(starts)), utc_stamp(max(ends))


def measure_vllm_bench_serve(files: Sequence[Path], facts: ImportFacts) -> Measured:
    """What one or more `vllm bench serve --save-result` files measured; a point per run."""
    runs = [
        (f"{path}" if len(objects) == 1 else f"{path} (run {index})", run)
        for path in files
        for objects in [read_vllm_objects(path)]
        for index, run in enumerate(objects, start=1)
    ]
    served_model = same([(where, run.get("model_id")) for where, run in runs], "model_id")
    backend = same([(where, run.get("backend")) for where, run in runs], "backend") or same(
        [(where, run.get("endpoint_type")) for where, run in runs], "endpoint_type"
    )
    # The flags a vLLM file always needs, all refused at once before its local times are read.
    require_given(facts, {**_VLLM_NEEDS, **lengths_needed(facts, replayed_trace=False)})
    zone = timezone_of(required(facts, "timezone"))
    started_at, finished_at = _window(runs, zone)
    points = [_point(run, where, facts.slo_given) for where, run in runs]
    return Measured(
        tool_name=VLLM_TOOL,
        points=points,
        started_at=started_at,
        finished_at=finished_at,
        served_model=served_model,
        api=_API.get(str(backend)),
        tool_version=facts.engine_version,
        itl_per_chunk=True,  # vllm/benchmarks/lib/endpoint_request_func.py: a gap a chunk
    )


VLLM_FORMAT = ImportFormat(
    name="vllm",
    description="a `vllm bench serve --save-result` file",
    shape="JSON objects with `output_throughput`",
    looks_like=looks_like_vllm,
    measure=measure_vllm_bench_serve,
    command_why=COMMAND_WHY,
)
