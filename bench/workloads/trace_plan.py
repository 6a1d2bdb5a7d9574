"""A `bench run --trace` set up: the trace read and cut, its one load point, and the identity
the result's workload states (`trace_setup`).

A trace run is one open-loop point: the trace's own arrivals (÷ `--trace-speed`), or re-timed at
the one `--request-rate` given. `--num-requests` cuts the trace after that many requests,
`--duration` after the requests that arrive within that many seconds of the replay's start; the
identity says where (`cut`). No warm-up: the trace's first requests are part of what it
recorded (a cold cache included).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.run.config import MULTITURN, RunConfig
from infermeter.bench.run.load import PointPlan
from infermeter.bench.workloads.dataset import Tokenizer
from infermeter.bench.workloads.lengths import DATASET_LENGTH
from infermeter.bench.workloads.trace import Trace, TracePrompts, read_trace
from infermeter.bench.workloads.trace_dag import FORMAT as DAG_FORMAT
from infermeter.bench.workloads.trace_dag import Dag, is_dag_file, read_dag
from infermeter.bench.workloads.trace_replay import TracePacing, chains
from infermeter.registry.builder import unchecked
from infermeter.registry.models import Workload
from infermeter.registry.models.identity import TraceWorkload


@dataclass(frozen=True)
class TraceRun:
    """What `run_points` needs to replay a trace."""

    prompts: TracePrompts | None
    plan: PointPlan
    pacing: TracePacing | None  # None for a DAG, which its plan paces
    identity: dict[str, Any]
    dag: Dag | None = None  # an AIPerf Conversation DAG, paced by the plan's load


def _check_options(config: RunConfig, dag: bool = False) -> None:
    if config.trace is None:
        if config.trace_speed != 1.0:
            raise BenchConfigError("applies to a --trace replay", "--trace-speed")
        if config.trace_block_size is not None:
            raise BenchConfigError("applies to a --trace replay", "--trace-block-size")
        return
    for conflict, option in (
        (config.concurrency and not dag, "--concurrency"),
        (dag and config.trace_speed != 1.0, "--trace-speed"),
        (dag and config.trace_block_size, "--trace-block-size"),
        (dag and config.num_requests, "--num-requests"),
        (dag and config.duration_s, "--duration"),
        (config.search, "--find-max-rate"),
        (config.profile == MULTITURN, "--profile"),
        (config.dataset, "--dataset"),
        (config.shared_prefix_tokens, "--shared-prefix-tokens"),
        (config.workers > 1, "--workers"),
        (config.input_len, "--input-len"),
        (config.output_len, "--output-len"),
        (config.max_concurrency, "--max-concurrency"),
        (config.warmup_requests, "--warmup"),
        (config.turns, "--turns"),
    ):
        if conflict:
            raise BenchConfigError(
                "does not apply to a --trace replay, whose requests, lengths and arrivals are "
                "the trace's",
                option,
            )
    if len(config.request_rates) > 1:
        raise BenchConfigError("a trace is re-timed at one rate", "--request-rate")
    if config.request_rates and config.trace_speed != 1.0:
        raise BenchConfigError(
            "give either --trace-speed (the trace's arrivals, scaled) or --request-rate "
            "(re-timed), not both",
            "--trace-speed",
        )
    if not config.trace_speed > 0:
        raise BenchConfigError("must be greater than 0", "--trace-speed")


def _cut_at_duration(trace: Trace, config: RunConfig, pacing: TracePacing) -> Trace:
    if config.duration_s is None:
        return trace
    kept = {
        request.line
        for chain in chains(trace, pacing, config.seed)
        if chain.start_s <= config.duration_s
        for request in chain.turns
    }
    return replace(trace, requests=tuple(r for r in trace.requests if r.line in kept))


def trace_setup(config: RunConfig, tokenizer: Tokenizer | None) -> TraceRun | None:
    """The replay of `config.trace` (None without one); raises BenchConfigError for options
    a trace does not take, WorkloadFileError for a bad trace."""
    if config.trace is not None and is_dag_file(config.trace):
        _check_options(config, dag=True)
        return _dag_setup(config, config.trace)
    _check_options(config)
    if config.trace is None:
        return None
    rate = config.request_rates[0] if config.request_rates else None
    pacing = TracePacing(config.trace_speed, rate)
    trace = read_trace(config.trace, block_size=config.trace_block_size, limit=config.num_requests)
    trace = _cut_at_duration(trace, config, pacing)
    plan = PointPlan(
        request_rate=offered_rate(trace, pacing),
        num_requests=len(trace.requests),
        warmup_requests=0,
        seed=config.seed,
    )
    return TraceRun(
        prompts=TracePrompts(trace, tokenizer, config.prompt_salt),
        plan=plan,
        pacing=pacing,
        identity=trace_identity(trace, pacing),
    )


def _dag_setup(config: RunConfig, path: Path) -> TraceRun:
    """An AIPerf DAG's replay: every root once, at `--concurrency` (1 by default) or roots
    re-timed at `--request-rate` (`bench.workloads.trace_dag_replay`)."""
    if config.api != "chat":
        raise BenchConfigError(
            "an AIPerf Conversation DAG holds chat messages: give --api chat", "--api"
        )
    if len(config.concurrency) > 1:
        raise BenchConfigError("a DAG is replayed at one load", "--concurrency")
    if config.concurrency and config.request_rates:
        raise BenchConfigError("give --concurrency or --request-rate, not both", "--concurrency")
    dag = read_dag(path)
    rate = config.request_rates[0] if config.request_rates else None
    concurrency = None if rate is not None else (config.concurrency or [1])[0]
    requests = dag.total_requests
    plan = PointPlan(
        concurrency=concurrency,
        request_rate=rate,
        num_requests=requests,
        warmup_requests=0,
        seed=config.seed,
    )
    identity = {
        "name": dag.name,
        "sha256": dag.sha256,
        "format": DAG_FORMAT,
        "block_size": None,
        "requests": requests,
        "requests_in_file": requests,
        "cut": None,
        "speed": None,
        "rate": rate,
        "concurrency": concurrency,
        "prefix_reuse_max": None,
    }
    return TraceRun(None, plan, None, identity, dag=dag)


def offered_rate(trace: Trace, pacing: TracePacing) -> float:
    """The rate a replay offers, as its load point states it: the pacing's rate when re-timed,
    else the replayed requests over the span of their timestamps ÷ its speed (at least 1 s)."""
    if pacing.rate is not None:
        return pacing.rate
    stamps = [r.timestamp_ms for r in trace.requests if r.timestamp_ms is not None]
    span_s = pacing.replay_s(stamps[-1] - stamps[0]) if stamps else 0.0
    return len(trace.requests) / max(span_s, 1.0)


def trace_identity(trace: Trace, pacing: TracePacing) -> dict[str, Any]:
    """The result's `identity.workload.trace`: what makes two replays the same workload."""
    reuse = trace.prefix_reuse_max()
    return {
        "name": trace.name,
        "sha256": trace.sha256,
        "format": trace.format,
        "block_size": trace.block_size,
        "requests": len(trace.requests),
        "requests_in_file": trace.lines,
        "cut": trace.cut,
        "speed": pacing.identity_speed,
        "rate": pacing.rate,
        "prefix_reuse_max": round(reuse, 4) if reuse is not None else None,
    }


def trace_workload(trace: dict[str, Any], seed: int | None, api: str | None) -> Workload:
    """The result's `identity.workload` of a replay of the trace whose identity is `trace`
    (`trace_identity`), built unchecked (the result's builder validates it): a run here or an
    imported one, grouped by that identity."""
    return unchecked(
        Workload,
        profile="custom",
        input_len=DATASET_LENGTH,
        output_len=DATASET_LENGTH,
        dataset=f"trace {trace['name']}",
        dataset_sha256=trace["sha256"],
        seed=seed,
        api=api,
        trace=unchecked(TraceWorkload, **trace),
    )
