"""`bench run` as a library call: one typed `RunConfig` in, one `RunResult` out.

For now the server must already be running (`endpoint`); launching vLLM comes later. The run
checks the endpoint (`GET /v1/models`, which also names the model when none is given), then
runs each load point in turn: closed-loop points for each concurrency, or open-loop points for
each request rate. A point during which the server went away (no request got a single byte
of an answer, or some did not and the server no longer answers `GET /v1/models`) is
discarded and stops the run; the finished points are kept and the result is marked
incomplete (so is a run cut by Ctrl-C or SIGTERM, and one in which every request failed). A
Ctrl-C or SIGTERM keeps the point under way too, with the requests that finished before it
and the `interrupted` verdict (`bench.interrupted`), when at least one measured request of it
completed.

With `workers` above 1 each point is split across that many client processes
(`bench.workers`), for loads one process cannot parse; the records are merged.

A `PointObserver` (telemetry, a launched server's watchdog) sees each point start and end, with
its records; when it returns a reason at the end of a point, that point is discarded and the run
stops there, incomplete, with that reason. A `RunProgress` (the live display, `bench.progress`)
also sees every request as it finishes.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from bench.client import (
    Api,
    ErrorKind,
    PromptRequest,
    RequestRecord,
    StreamingClient,
    list_models,
    run_event_loop,
)
from bench.conversation import (
    DEFAULT_THINK_TIME_S,
    DEFAULT_TURNS,
    ConversationSpec,
    SessionFactory,
    load_conversations,
    run_sessions,
    turn_summaries,
)
from bench.errors import BenchConfigError, EndpointError
from bench.interrupted import LivePoint, interrupted_summary
from bench.interrupts import stop_reason
from bench.load import PointPlan, PointRun, Send, run_point
from bench.metrics import (
    PERCENTILE_MIN_REQUESTS,
    PointSummary,
    Slo,
    VerdictThresholds,
    summarize_point,
)
from bench.progress import point_name
from bench.search import MaxLoadSearch, SearchResult, SearchSpec, past_knee, search_json
from bench.workers import WorkerJob, run_point_in_workers
from bench.workloads import (
    LengthDistribution,
    RequestFactory,
    Tokenizer,
    WorkloadSpec,
    dataset_sha256,
    get_profile,
    load_sharegpt,
    load_tokenizer,
)

MAX_WORKERS = 256  # client processes of one point (a 256-core host)

MULTITURN = "chat-multiturn"


@dataclass(frozen=True)
class RunConfig:
    """Everything `bench run --endpoint` needs; see `infermeter bench run --help`."""

    endpoint: str
    model: str | None = None
    api: Api = "completions"
    profile: str = "chat"
    input_len: LengthDistribution | None = None
    output_len: LengthDistribution | None = None
    dataset: Path | None = None
    tokenizer: str | None = None
    concurrency: tuple[int, ...] = ()
    request_rates: tuple[float, ...] = ()
    max_concurrency: int | None = None
    burstiness: float = 1.0
    num_requests: int | None = None
    duration_s: float | None = None
    warmup_requests: int | None = None
    seed: int = 0
    prompt_salt: int = 0
    shared_prefix_tokens: int = 0
    timeout_s: float = 600.0
    slo: Slo = field(default_factory=Slo)
    ignore_eos: bool = True
    continuous_usage_stats: bool = False
    workers: int = 1
    extra_body: Mapping[str, Any] | None = None
    api_key: str | None = field(default=None, repr=False)  # sent, never stored or printed
    search: SearchSpec | None = None
    stop_when_saturated: bool = False
    thresholds: VerdictThresholds = field(default_factory=VerdictThresholds)
    turns: LengthDistribution | None = None
    think_time_s: float | None = None


class PointObserver(Protocol):
    """Watches the load points of a run (called inside the run's event loop: be quick)."""

    def point_started(self, plan: PointPlan) -> None:
        """The point's first request is about to leave."""

    def point_ended(
        self, records: Sequence[RequestRecord], summary: PointSummary | None
    ) -> str | None:
        """The point is over: its records and summary (None when the point was cut short or
        the server never answered). A returned reason discards the point and stops the run."""


class RunProgress(Protocol):
    """Follows a run live (called inside the run's event loop: be quick)."""

    def point_started(self, plan: PointPlan, number: int, points: int) -> None:
        """Point `number` (from 1) of `points` is about to start."""

    def request_finished(self, record: RequestRecord) -> None:
        """A request of the current point finished (warm-up included), failed or not."""

    def point_ended(self, summary: PointSummary | None) -> None:
        """The point is over: its summary, or None when it was cut short or discarded."""


@dataclass
class RunResult:
    """The summaries of the points that finished, and whether the run finished."""

    endpoint: str
    model: str
    api: Api
    profile: str
    seed: int
    prompt_salt: int
    points: list[PointSummary] = field(default_factory=list)
    incomplete: bool = False
    stop_reason: str | None = None
    search: SearchResult | None = None
    dataset_sha256: str | None = None  # of the --dataset file the requests came from

    def as_json(self) -> dict[str, Any]:
        """The `--json` object: `{"points": [...], ...}`."""
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "api": self.api,
            "profile": self.profile,
            "seed": self.seed,
            "prompt_salt": self.prompt_salt,
            "incomplete": self.incomplete,
            "stop_reason": self.stop_reason,
            "points": [point.as_json() for point in self.points],
            "search": search_json(self.search) if self.search is not None else None,
        }


def plan_points(config: RunConfig) -> list[PointPlan]:
    """The load points of a run, in order, with their default sizes and warm-ups.

    Defaults: the profile's concurrency sweep when neither a concurrency nor a rate is given;
    without `--num-requests` and `--duration`, max(100, 4 × concurrency) requests per closed-loop
    point and max(100, 30 s of traffic) per open-loop point; a warm-up of one request per
    concurrency slot, or about one second of traffic (at most 100 requests).
    """
    if config.concurrency and config.request_rates:
        raise BenchConfigError(
            "give either --concurrency (closed loop) or --request-rate (open loop), not both",
            "--request-rate",
        )
    if config.search is not None:
        if config.concurrency or config.request_rates:
            raise BenchConfigError(
                "the search chooses the loads; give its start with --search-start",
                "--concurrency" if config.concurrency else "--request-rate",
            )
        if config.max_concurrency is not None and config.search.kind == "concurrency":
            raise BenchConfigError(
                "caps an open loop, not a concurrency search", "--max-concurrency"
            )
        return []
    if config.max_concurrency is not None and not config.request_rates:
        raise BenchConfigError(
            "caps an open loop; give it with --request-rate", "--max-concurrency"
        )
    concurrencies = config.concurrency
    if not concurrencies and not config.request_rates:
        concurrencies = get_profile(config.profile).default_concurrency
    unbounded = config.num_requests is None and config.duration_s is None
    plans = [
        PointPlan(
            concurrency=concurrency,
            num_requests=max(100, 4 * concurrency) if unbounded else config.num_requests,
            duration_s=config.duration_s,
            warmup_requests=(
                concurrency if config.warmup_requests is None else config.warmup_requests
            ),
            seed=config.seed,
        )
        for concurrency in concurrencies
    ]
    plans += [
        PointPlan(
            request_rate=rate,
            max_concurrency=config.max_concurrency,
            burstiness=config.burstiness,
            num_requests=max(100, math.ceil(30 * rate)) if unbounded else config.num_requests,
            duration_s=config.duration_s,
            warmup_requests=(
                min(100, math.ceil(rate))
                if config.warmup_requests is None
                else config.warmup_requests
            ),
            seed=config.seed,
        )
        for rate in config.request_rates
    ]
    return plans


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


def probe_plan(config: RunConfig, load: float) -> PointPlan:
    """The load point that measures one probe of `config.search` at `load`.

    A probe is bounded by its request count only, never fewer than a p99 needs (100 measured
    requests): --num-requests when given, else --duration's worth of traffic at the rate, else
    the sizes a fixed point would get; warm-ups as a fixed point's."""
    search = config.search
    assert search is not None
    need = PERCENTILE_MIN_REQUESTS["p99"]
    if search.kind == "concurrency":
        concurrency = int(load)
        wanted = config.num_requests or 4 * concurrency
        return PointPlan(
            concurrency=concurrency,
            num_requests=max(need, wanted),
            warmup_requests=(
                concurrency if config.warmup_requests is None else config.warmup_requests
            ),
            seed=config.seed,
        )
    seconds = config.duration_s or 30.0
    wanted = config.num_requests or math.ceil(seconds * load)
    return PointPlan(
        request_rate=load,
        max_concurrency=config.max_concurrency,
        burstiness=config.burstiness,
        num_requests=max(need, wanted),
        warmup_requests=(
            min(100, math.ceil(load)) if config.warmup_requests is None else config.warmup_requests
        ),
        seed=config.seed,
    )


def run_benchmark(
    config: RunConfig,
    on_point: Callable[[PointSummary], None] | None = None,
    observer: PointObserver | None = None,
    progress: RunProgress | None = None,
    on_run: Callable[[RunResult], None] | None = None,
) -> RunResult:
    """Run every load point of `config` against its endpoint; `on_point` sees each summary
    as soon as its point ends, `on_run` then the run so far, `observer` each point's start
    and end, `progress` every request too (see the module docstring). Raises
    `EndpointError` when the endpoint cannot be reached."""
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
    plans = plan_points(config)
    profile = get_profile(config.profile)
    tokenizer: Tokenizer | None = load_tokenizer(config.tokenizer) if config.tokenizer else None
    sessions = _session_factory(config)
    dataset = (
        load_sharegpt(config.dataset, tokenizer) if config.dataset and sessions is None else None
    )
    factory = RequestFactory(
        WorkloadSpec(
            profile=profile,
            input_len=config.input_len,
            output_len=config.output_len,
            seed=config.seed,
            prompt_salt=config.prompt_salt,
            shared_prefix_tokens=config.shared_prefix_tokens,
            exact_output=config.ignore_eos,
        ),
        tokenizer=tokenizer,
        dataset=dataset,
    )
    model = run_event_loop(_resolve_model(config))
    result = RunResult(
        endpoint=config.endpoint,
        model=model,
        api=config.api,
        profile=profile.name,
        seed=config.seed,
        prompt_salt=config.prompt_salt,
        dataset_sha256=dataset_sha256(config.dataset) if config.dataset else None,
    )
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
    job = None
    if config.workers > 1:
        job = WorkerJob(
            endpoint=config.endpoint,
            model=model,
            factory=factory,
            api=config.api,
            timeout_s=config.timeout_s,
            ignore_eos=config.ignore_eos,
            continuous_usage_stats=config.continuous_usage_stats,
            count_tokens_with_tokenizer=count_tokens is not None,
            workers=config.workers,
            extra_body=dict(config.extra_body or {}),
            api_key=config.api_key,
        )
    point_seen = on_point
    if on_run is not None:

        def point_seen(summary: PointSummary) -> None:
            if on_point is not None:
                on_point(summary)
            on_run(result)

    live = _Live()
    thresholds = config.thresholds
    try:
        run_event_loop(
            _run_points(
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
                search_plan=lambda load: probe_plan(config, load),
                stop_when_saturated=config.stop_when_saturated,
                thresholds=thresholds,
                live=live,
            )
        )
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM under `bench.interrupts`
        result.incomplete = True
        result.stop_reason = stop_reason(stop)
        point = live.take()
        if point is not None:
            summary = interrupted_summary(point, result.stop_reason, config.slo, thresholds)
            if summary is not None and sessions is not None:
                summary = replace(summary, turns=turn_summaries(point.run.records))
            _end_point(point, summary, result, observer, progress, point_seen)
    finally:
        point = live.take()  # a point left open by anything else: seen to end, not kept
        if point is not None:
            _end_point(point, None, result, observer, progress, None)
    if not result.incomplete and result.points and not any(p.completed for p in result.points):
        result.incomplete = True
        result.stop_reason = "every request failed (" + _failure_kinds(result.points) + ")"
    return result


class _Live:
    """The point under way, if any, for the end of a run that a signal stopped."""

    def __init__(self) -> None:
        self.point: LivePoint | None = None

    def take(self) -> LivePoint | None:
        point, self.point = self.point, None
        return point


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


async def _run_points(
    client: StreamingClient,
    factory: RequestFactory,
    plans: list[PointPlan],
    slo: Slo,
    result: RunResult,
    on_point: Callable[[PointSummary], None] | None,
    observer: PointObserver | None = None,
    progress: RunProgress | None = None,
    *,
    workers: WorkerJob | None = None,
    sessions: SessionFactory | None = None,
    search: MaxLoadSearch | None = None,
    search_plan: Callable[[float], PointPlan] | None = None,
    stop_when_saturated: bool = False,
    thresholds: VerdictThresholds | None = None,
    live: _Live | None = None,
) -> None:
    live = live if live is not None else _Live()
    send: Send = client.send
    if progress is not None:
        report = progress.request_finished

        async def send_and_report(request: PromptRequest, intended_ns: int | None) -> RequestRecord:
            record = await client.send(request, intended_ns)
            report(record)
            return record

        send = send_and_report

    next_index = 0
    next_session = 0

    async def measure(
        plan: PointPlan, number: int, points: int
    ) -> tuple[bool, PointSummary | None]:
        """Run one point; (False, …) when the run must stop, else (True, its summary)."""
        nonlocal next_index, next_session
        plan = replace(plan, first_index=next_index)
        if observer is not None:
            observer.point_started(plan)
        if progress is not None:
            progress.point_started(plan, number, points)
        point = live.point = LivePoint(plan, sent=None if workers is not None else 0)

        async def counted(request: PromptRequest, intended_ns: int | None) -> RequestRecord:
            point.sent = (point.sent or 0) + 1
            return await send(request, intended_ns)

        try:
            run: PointRun
            if workers is not None:
                on_record = progress.request_finished if progress is not None else None
                # A point with fewer streams than workers uses one process per stream.
                processes = min(workers.workers, plan.concurrency or workers.workers)
                job = replace(workers, workers=processes)
                run = await run_point_in_workers(job, plan, on_record, into=point.run)
            elif sessions is not None:
                run = await run_sessions(counted, sessions, plan, next_session, into=point.run)
                next_session += len({record.session for record in run.records})
            else:
                run = await run_point(counted, factory.build, plan, into=point.run)
        except (KeyboardInterrupt, asyncio.CancelledError):
            # Stopped from outside (the loop's tasks are cancelled after a Ctrl-C or SIGTERM):
            # the point stays open in `live`, for `run_benchmark` to keep what finished.
            raise
        except BaseException:
            live.point = None
            if progress is not None:
                progress.point_ended(None)
            if observer is not None:
                observer.point_ended([], None)
            raise
        live.point = None
        next_index += len(run.records)
        summary = None
        gone = await _server_gone(client, run.records)
        if not gone:
            summary = summarize_run(run, slo, thresholds or VerdictThresholds())
            if sessions is not None:
                summary = replace(summary, turns=turn_summaries(run.records))
        stop_reason = observer.point_ended(run.records, summary) if observer else None
        if progress is not None:
            progress.point_ended(summary if stop_reason is None else None)
        if stop_reason is not None:
            result.incomplete = True
            result.stop_reason = stop_reason
            return False, None
        if summary is None:
            result.incomplete = True
            last = next(r for r in reversed(run.records) if _never_answered(r))
            during = f" during {point_name(plan.concurrency, plan.request_rate)}"
            result.stop_reason = f"the server stopped answering{during}: {last.error_detail}"
            return False, None
        result.points.append(summary)
        if on_point is not None:
            on_point(summary)
        return True, summary

    async with client:
        if search is not None:
            assert search_plan is not None
            result.search = search.result
            number = 0
            while (load := search.next_load()) is not None:
                number += 1
                going, summary = await measure(search_plan(load), number, search.spec.max_probes)
                if not going:
                    return
                search.record(load, summary)
            return
        previous: tuple[PointPlan, PointSummary] | None = None
        for number, plan in enumerate(plans, start=1):
            going, summary = await measure(plan, number, len(plans))
            if not going or summary is None:
                return
            if stop_when_saturated and previous is not None and number < len(plans):
                knee = past_knee(previous[1], summary, _load_of(plan) / _load_of(previous[0]))
                if knee is not None:
                    result.stop_reason = f"stopped at {_point_label(plan)}, {knee}"
                    return
            previous = plan, summary


def _load_of(plan: PointPlan) -> float:
    return float(plan.concurrency if plan.concurrency is not None else plan.request_rate or 0)


def _point_label(plan: PointPlan) -> str:
    if plan.concurrency is not None:
        return f"concurrency {plan.concurrency}"
    return f"{plan.request_rate:g} req/s"


async def _server_gone(client: StreamingClient, records: Sequence[RequestRecord]) -> bool:
    """True when the server went away during the point: every request went unanswered, or
    some did and `GET /v1/models` no longer answers either. Such a point is cut short, not
    measured: it is discarded and the run stops (as when a launched vLLM exits)."""
    unanswered = [record for record in records if _never_answered(record)]
    if not unanswered:
        return False
    if len(unanswered) == len(records):
        return True
    try:
        await list_models(
            client.base_url, timeout_s=min(client.timeout_s, 5.0), api_key=client.api_key
        )
    except EndpointError:
        return True
    except ValueError:
        return False  # it answers, if not with a model list
    return False


def summarize_run(
    run: PointRun, slo: Slo, thresholds: VerdictThresholds | None = None
) -> PointSummary:
    """The summary of a point's run; the client CPU judged is the busiest process's."""
    return summarize_point(
        run.records,
        concurrency=run.plan.concurrency,
        request_rate=run.plan.request_rate,
        slo=slo,
        client_cpu_s=run.busiest_client_cpu_s,
        thresholds=thresholds or VerdictThresholds(),
    )


def _never_answered(record: RequestRecord) -> bool:
    """True when the request got not one byte of an answer: the server looks gone."""
    if record.error == ErrorKind.CONNECTION:
        return True
    return record.error == ErrorKind.DISCONNECT and not record.token_times_ns
