"""`bench run` as a library call: one typed `RunConfig` in, one `RunResult` out.

For now the server must already be running (`endpoint`); launching vLLM comes later. The run
checks the endpoint (`GET /v1/models`, which also names the model when none is given), then
runs each load point in turn: closed-loop points for each concurrency, or open-loop points for
each request rate. A point during which the server went away (no request got a single byte
of an answer, or some did not and the server no longer answers `GET /v1/models`) is
discarded and stops the run; the finished points are kept and the result is marked
incomplete (so is a run cut by Ctrl-C or SIGTERM, and one in which every request failed). A
Ctrl-C or SIGTERM keeps the point under way too, with the requests that finished before it
and the `interrupted` verdict (`bench.run.interrupted`), when at least one measured request of it
completed.

With `workers` above 1 each point is split across that many client processes
(`bench.run.workers`), for loads one process cannot parse; the records are merged.

A `PointObserver` (telemetry, a launched server's watchdog) sees each point start and end, with
its records; when it returns a reason at the end of a point, that point is discarded and the run
stops there, incomplete, with that reason. A `RunProgress` (the live display, `bench.run.progress`)
also sees every request as it finishes.

This module checks a run's options and sets it up (`run_benchmark`); its parts, one concept
each: `config` (`RunConfig`, `RunResult`), `hooks` (`PointObserver`, `RunProgress`),
`point_plans` (the load points) and `point_loop` (measuring them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from infermeter.bench.client.client import (
    StreamingClient,
    list_models,
    refuse_unanswered,
    run_event_loop,
)
from infermeter.bench.errors import BenchConfigError, EndpointError
from infermeter.bench.run.config import MULTITURN, RunConfig, RunResult
from infermeter.bench.run.hooks import PointObserver, RunProgress
from infermeter.bench.run.interrupted import LivePoint, interrupted_summary
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.point_loop import PointUnderWay, run_points
from infermeter.bench.run.point_plans import plan_points, probe_plan
from infermeter.bench.run.point_summary import PointSummary
from infermeter.bench.run.search import MaxLoadSearch
from infermeter.bench.run.workers import WorkerJob
from infermeter.bench.session.interrupts import stop_reason
from infermeter.bench.workloads.conversation import (
    DEFAULT_THINK_TIME_S,
    DEFAULT_TURNS,
    ConversationSpec,
    SessionFactory,
    load_conversations,
    turn_summaries,
)
from infermeter.bench.workloads.dataset import (
    DatasetEntry,
    Tokenizer,
    dataset_sha256,
    load_sharegpt,
    load_tokenizer,
)
from infermeter.bench.workloads.profiles import Profile, get_profile
from infermeter.bench.workloads.prompts import RequestFactory, WorkloadSpec
from infermeter.bench.workloads.trace_plan import TraceRun, trace_setup
from infermeter.bench.workloads.trace_replay import ttft_by_cached_share
from infermeter.calculators.fields import same_named

__all__ = ["MAX_WORKERS", "RunWorkload", "prepare_workload", "run_benchmark"]

MAX_WORKERS = 256  # client processes of one point (a 256-core host)


def _session_factory(config: RunConfig) -> SessionFactory | None:
    """The multi-turn sessions of a `chat-multiturn` run (None for other profiles)."""
    if config.profile != MULTITURN:
        for value, option in ((config.turns, "--turns"), (config.think_time_s, "--think-time")):
            if value is not None:
                raise BenchConfigError(f"applies to --profile {MULTITURN}", option)
        return None
    for conflict, option in (
        (config.request_rates, "--request-rate"),
        (config.search, "--find-max-rate"),
        (config.workers > 1, "--workers"),
        (config.shared_prefix_tokens, "--shared-prefix-tokens"),
    ):
        if conflict:
            raise BenchConfigError(
                f"does not apply to --profile {MULTITURN}, whose sessions run as "
                "--concurrency users",
                option,
            )
    profile = get_profile(MULTITURN)
    spec = ConversationSpec(
        turns=config.turns or DEFAULT_TURNS,
        user_len=config.input_len or profile.input_len,
        reply_len=config.output_len or profile.output_len,
        think_time_s=DEFAULT_THINK_TIME_S if config.think_time_s is None else config.think_time_s,
        seed=config.seed,
        prompt_salt=config.prompt_salt,
    )
    return SessionFactory(spec, load_conversations(config.dataset) if config.dataset else None)


@dataclass(frozen=True)
class RunWorkload:
    """What a run sends, read and checked before a server is launched or asked anything
    (`prepare_workload`): its profile and tokenizer, its load points, a trace's replay, a
    multi-turn run's sessions, and the requests (a dataset's or made up)."""

    profile: Profile
    tokenizer: Tokenizer | None
    plans: list[PointPlan]
    trace: TraceRun | None
    sessions: SessionFactory | None
    factory: RequestFactory


def prepare_workload(config: RunConfig) -> RunWorkload:
    """The workload of `config`; raises BenchConfigError for options that do not go together
    and WorkloadFileError for a bad tokenizer, trace or dataset. It does not depend on the
    endpoint or the model served, so a session prepares it before it launches vLLM (a bad
    trace found after minutes of loading a model wastes them)."""
    _check_workers(config)
    profile = get_profile(config.profile)
    tokenizer: Tokenizer | None = load_tokenizer(config.tokenizer) if config.tokenizer else None
    trace = trace_setup(config, tokenizer)
    plans = [trace.plan] if trace is not None else plan_points(config)
    sessions = _session_factory(config)
    dataset = (
        load_sharegpt(config.dataset, tokenizer) if config.dataset and sessions is None else None
    )
    factory = _request_factory(config, profile, tokenizer, dataset)
    return RunWorkload(profile, tokenizer, plans, trace, sessions, factory)


def run_benchmark(
    config: RunConfig,
    on_point: Callable[[PointSummary], None] | None = None,
    observer: PointObserver | None = None,
    progress: RunProgress | None = None,
    on_run: Callable[[RunResult], None] | None = None,
    workload: RunWorkload | None = None,
) -> RunResult:
    """Run every load point of `config` against its endpoint; `on_point` sees each summary
    as soon as its point ends, `on_run` then the run so far, `observer` each point's start
    and end, `progress` every request too (see the module docstring). `workload` is
    `prepare_workload(config)`'s, prepared already or here. Raises `EndpointError` when the
    endpoint cannot be reached."""
    workload = workload if workload is not None else prepare_workload(config)
    profile, tokenizer, plans = workload.profile, workload.tokenizer, workload.plans
    trace, sessions, factory = workload.trace, workload.sessions, workload.factory
    model = run_event_loop(_resolve_model(config))
    result = _new_result(config, model, profile, trace)
    client, job = _clients(config, model, factory, tokenizer)
    point_seen = _point_seen(on_point, on_run, result)
    live = PointUnderWay()
    try:
        run_event_loop(
            run_points(
                client,
                factory,
                plans,
                config.slo,
                result,
                point_seen,
                observer,
                progress,
                workers=job,
                search=MaxLoadSearch(config.search) if config.search is not None else None,
                sessions=sessions,
                trace=trace,
                search_plan=lambda load: probe_plan(config, load),
                stop_when_saturated=config.stop_when_saturated,
                thresholds=config.thresholds,
                live=live,
            )
        )
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM under `bench.session.interrupts`
        result.incomplete, result.stop_reason = True, stop_reason(stop)
        cut = _interrupted(live.take(), result.stop_reason, config, sessions, trace)
        if cut is not None:
            _end_point(*cut, result, observer, progress, point_seen)
    finally:
        point = live.take()  # a point left open by anything else: seen to end, not kept
        if point is not None:
            _end_point(point, None, result, observer, progress, None)
    if not result.incomplete and result.points and not any(p.completed for p in result.points):
        result.incomplete = True
        result.stop_reason = "every request failed (" + _failure_kinds(result.points) + ")"
    return result


def _new_result(
    config: RunConfig, model: str, profile: Profile, trace: TraceRun | None
) -> RunResult:
    """The run's result before any point: what was measured, and with what."""
    return RunResult(
        endpoint=config.endpoint,
        model=model,
        api=config.api,
        profile=profile.name,
        seed=config.seed,
        prompt_salt=config.prompt_salt,
        dataset_sha256=dataset_sha256(config.dataset) if config.dataset else None,
        trace=trace.identity if trace is not None else None,
    )


def _check_workers(config: RunConfig) -> None:
    """`--workers`: at least 1, at most `MAX_WORKERS`, and a stream for each process."""
    if config.workers < 1:
        raise BenchConfigError("must be at least 1", "--workers")
    if config.workers > MAX_WORKERS:
        raise BenchConfigError(
            f"{config.workers} client processes; at most {MAX_WORKERS}", "--workers"
        )
    streams = max(config.concurrency, default=0) or config.max_concurrency
    if streams and config.workers > streams:
        raise BenchConfigError(
            f"{config.workers} client processes for at most {streams} concurrent streams; "
            "each process needs a stream",
            "--workers",
        )


def _request_factory(
    config: RunConfig,
    profile: Profile,
    tokenizer: Tokenizer | None,
    dataset: list[DatasetEntry] | None,
) -> RequestFactory:
    """The requests of the run's workload: a profile's, a dataset's, with its lengths."""
    return RequestFactory(
        same_named(WorkloadSpec, vars(config), profile=profile, exact_output=config.ignore_eos),
        tokenizer=tokenizer,
        dataset=dataset,
    )


def _clients(
    config: RunConfig, model: str, factory: RequestFactory, tokenizer: Tokenizer | None
) -> tuple[StreamingClient, WorkerJob | None]:
    """The client of this process, and the worker processes' job when `--workers` is over 1;
    tokens are counted with `tokenizer` when there is one."""
    count_tokens = None
    if tokenizer is not None:
        encode = tokenizer.encode

        def count_tokens(text: str) -> int:
            return len(encode(text, add_special_tokens=False).ids)

    client = StreamingClient(
        config.endpoint,
        model,
        api=config.api,
        timeout_s=config.timeout_s,
        ignore_eos=config.ignore_eos,
        continuous_usage_stats=config.continuous_usage_stats,
        count_tokens=count_tokens,
        extra_body=dict(config.extra_body or {}),
        api_key=config.api_key,
    )
    if config.workers <= 1:
        return client, None
    job = same_named(
        WorkerJob,
        vars(config),
        model=model,
        factory=factory,
        count_tokens_with_tokenizer=count_tokens is not None,
        extra_body=dict(config.extra_body or {}),
    )
    return client, job


def _point_seen(
    on_point: Callable[[PointSummary], None] | None,
    on_run: Callable[[RunResult], None] | None,
    result: RunResult,
) -> Callable[[PointSummary], None] | None:
    """What sees each kept point: `on_point`, then `on_run` with the run so far."""
    if on_run is None:
        return on_point

    def point_seen(summary: PointSummary) -> None:
        if on_point is not None:
            on_point(summary)
        on_run(result)

    return point_seen


def _interrupted(
    point: LivePoint | None,
    reason: str,
    config: RunConfig,
    sessions: SessionFactory | None,
    trace: TraceRun | None,
) -> tuple[LivePoint, PointSummary | None] | None:
    """The point under way when a stop signal came, with its summary if it has one (the
    requests that finished before the signal, `interrupted`); None when no point was."""
    if point is None:
        return None
    summary = interrupted_summary(point, reason, config.slo, config.thresholds)
    if summary is not None and (sessions is not None or trace is not None):
        summary = replace(summary, turns=turn_summaries(point.run.records))
    if summary is not None and trace is not None:
        summary = replace(summary, cached_shares=ttft_by_cached_share(point.run.records))
    return point, summary


def _end_point(
    point: LivePoint,
    summary: PointSummary | None,
    result: RunResult,
    observer: PointObserver | None,
    progress: RunProgress | None,
    on_point: Callable[[PointSummary], None] | None,
) -> None:
    """The end of a point cut short: the observer sees its records (telemetry, raw records),
    and `summary`, when there is one and the observer has no objection, is kept."""
    reason = observer.point_ended(point.run.records, summary) if observer is not None else None
    kept = summary if reason is None else None
    if progress is not None:
        progress.point_ended(kept)
    if kept is not None:
        result.points.append(kept)
        if on_point is not None:
            on_point(kept)


def _failure_kinds(points: Sequence[PointSummary]) -> str:
    counts: dict[str, int] = {}
    for point in points:
        for kind, count in point.failures_by_kind.items():
            counts[kind] = counts.get(kind, 0) + count
    return ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items())) or "no kind"


async def _resolve_model(config: RunConfig) -> str:
    refuse_unanswered(config.endpoint, config.unanswered)
    try:
        models = await list_models(
            config.endpoint, timeout_s=min(config.timeout_s, 30.0), api_key=config.api_key
        )
    except ValueError as error:
        if config.model:
            return config.model  # a server without a usable /v1/models can still be measured
        raise EndpointError(f"{error}; pass --model", "--endpoint") from None
    if config.model is None:
        if not models:
            raise EndpointError("the server lists no model; pass --model", "--endpoint")
        return models[0]
    if models and config.model not in models:
        raise BenchConfigError(
            f"{config.model!r} is not served by {config.endpoint}; it serves: " + ", ".join(models),
            "--model",
        )
    return config.model
