"""The loop over a run's load points inside its event loop (`run_points`): each point measured in
turn (by one client, client processes or multi-turn sessions), summarized, and seen by the
observer and the progress display; a point during which the server went away is discarded
and stops the run, as does an observer's objection or a search's or saturation's end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace

from bench.client import (
    ErrorKind,
    PromptRequest,
    RequestRecord,
    StreamingClient,
    list_models,
)
from bench.conversation import (
    SessionFactory,
    run_sessions,
    turn_summaries,
)
from bench.errors import EndpointError
from bench.interrupted import LivePoint
from bench.load import PointPlan, PointRun, Send, run_point
from bench.metrics import (
    PointSummary,
    Slo,
    VerdictThresholds,
    summarize_point,
)
from bench.progress import point_name
from bench.run_config import RunResult
from bench.run_hooks import PointObserver, RunProgress
from bench.search import MaxLoadSearch, past_knee
from bench.trace_plan import TraceRun
from bench.trace_replay import run_trace, ttft_by_cached_share
from bench.workers import WorkerJob, run_point_in_workers
from bench.workloads import (
    RequestFactory,
)


class PointUnderWay:
    """The point under way, if any, for the end of a run that a signal stopped."""

    def __init__(self) -> None:
        self.point: LivePoint | None = None

    def take(self) -> LivePoint | None:
        point, self.point = self.point, None
        return point


async def run_points(
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
    trace: TraceRun | None = None,
    search: MaxLoadSearch | None = None,
    search_plan: Callable[[float], PointPlan] | None = None,
    stop_when_saturated: bool = False,
    thresholds: VerdictThresholds | None = None,
    live: PointUnderWay | None = None,
) -> None:
    """Measure `plans` in turn (or the probes `search` asks for), into `result`; see the
    module docstring for what stops the loop."""
    live = live if live is not None else PointUnderWay()
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
            elif trace is not None:
                run = await run_trace(counted, trace.prompts, point.run, trace.speed, trace.rate)
            elif sessions is not None:
                run = await run_sessions(counted, sessions, plan, next_session, into=point.run)
                next_session += len({record.session for record in run.records})
            else:
                run = await run_point(
                    counted, factory.build, plan, into=point.run, cut=client.cut_in_flight
                )
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
            if sessions is not None or trace is not None:
                summary = replace(summary, turns=turn_summaries(run.records))
            if trace is not None:
                summary = replace(summary, cached_shares=ttft_by_cached_share(run.records))
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
