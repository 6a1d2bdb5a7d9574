"""The loop over a run's load points inside its event loop (`run_points`): each point measured in
turn (by one client, client processes or multi-turn sessions), summarized, and seen by the
observer and the progress display; a point during which the server went away is discarded
and stops the run, as does an observer's objection or a search's or saturation's end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from infermeter.bench.client.client import StreamingClient, list_models
from infermeter.bench.client.request_record import PromptRequest, RequestRecord
from infermeter.bench.client.stream import ErrorKind
from infermeter.bench.errors import EndpointError
from infermeter.bench.run.config import RunResult
from infermeter.bench.run.hooks import PointObserver, RunProgress
from infermeter.bench.run.interrupted import LivePoint
from infermeter.bench.run.load import PointPlan, PointRun, Send, run_point
from infermeter.bench.run.metrics import summarize_point
from infermeter.bench.run.point_summary import PointSummary, VerdictThresholds
from infermeter.bench.run.progress import point_name
from infermeter.bench.run.search import MaxLoadSearch, past_knee
from infermeter.bench.run.workers import WorkerJob, run_point_in_workers
from infermeter.bench.workloads.conversation import (
    SessionFactory,
    run_sessions,
    turn_summaries,
)
from infermeter.bench.workloads.prompts import (
    RequestFactory,
)
from infermeter.bench.workloads.trace_dag_replay import run_dag
from infermeter.bench.workloads.trace_plan import TraceRun
from infermeter.bench.workloads.trace_replay import run_trace, ttft_by_cached_share
from infermeter.registry.models import Slo


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
    loop = _PointLoop(
        client, factory, slo, result, on_point, observer, progress, workers, sessions, trace,
        thresholds, live if live is not None else PointUnderWay(), _reporting(client, progress),
    )  # fmt: skip
    async with client:
        if search is not None:
            assert search_plan is not None
            await _search(loop, search, search_plan)
        else:
            await _each_plan(loop, plans, stop_when_saturated)


def _reporting(client: StreamingClient, progress: RunProgress | None) -> Send:
    """The client's `send`, telling `progress` of each request as it finishes."""
    if progress is None:
        return client.send
    report = progress.request_finished

    async def send_and_report(request: PromptRequest, intended_ns: int | None) -> RequestRecord:
        record = await client.send(request, intended_ns)
        report(record)
        return record

    return send_and_report


async def _search(
    loop: _PointLoop, search: MaxLoadSearch, search_plan: Callable[[float], PointPlan]
) -> None:
    """The probes a maximum-load search asks for, until it has its answer or the run stops."""
    loop.result.search = search.result
    number = 0
    while (load := search.next_load()) is not None:
        number += 1
        going, summary = await loop.measure(search_plan(load), number, search.spec.max_probes)
        if not going:
            return
        search.record(load, summary)


async def _each_plan(loop: _PointLoop, plans: list[PointPlan], stop_when_saturated: bool) -> None:
    """Each point of `plans` in turn; with `stop_when_saturated`, none past the knee."""
    previous: tuple[PointPlan, PointSummary] | None = None
    for number, plan in enumerate(plans, start=1):
        going, summary = await loop.measure(plan, number, len(plans))
        if not going or summary is None:
            return
        if stop_when_saturated and previous is not None and number < len(plans):
            knee = past_knee(previous[1], summary, _load_of(plan) / _load_of(previous[0]))
            if knee is not None:
                loop.result.stop_reason = f"stopped at {_point_label(plan)}, {knee}"
                return
        previous = plan, summary


@dataclass
class _PointLoop:
    """What measures a point, and where its summary goes (`run_points`' arguments)."""

    client: StreamingClient
    factory: RequestFactory
    slo: Slo
    result: RunResult
    on_point: Callable[[PointSummary], None] | None
    observer: PointObserver | None
    progress: RunProgress | None
    workers: WorkerJob | None
    sessions: SessionFactory | None
    trace: TraceRun | None
    thresholds: VerdictThresholds | None
    live: PointUnderWay
    send: Send
    next_index: int = 0
    next_session: int = 0

    async def measure(
        self, plan: PointPlan, number: int, points: int
    ) -> tuple[bool, PointSummary | None]:
        """Run one point; (False, …) when the run must stop, else (True, its summary)."""
        observer, progress = self.observer, self.progress
        plan = replace(plan, first_index=self.next_index)
        if observer is not None:
            observer.point_started(plan)
        if progress is not None:
            progress.point_started(plan, number, points)
        point = self.live.point = LivePoint(plan, sent=None if self.workers is not None else 0)
        try:
            run = await self._run(plan, point)
        except (KeyboardInterrupt, asyncio.CancelledError):
            # Stopped from outside (the loop's tasks are cancelled after a Ctrl-C or SIGTERM):
            # the point stays open in `live`, for `run_benchmark` to keep what finished.
            raise
        except BaseException:
            self.live.point = None
            if progress is not None:
                progress.point_ended(None)
            if observer is not None:
                observer.point_ended([], None)
            raise
        self.live.point = None
        self.next_index += len(run.records)
        return await self._ended(plan, run)

    async def _run(self, plan: PointPlan, point: LivePoint) -> PointRun:
        """The point's requests: by worker processes, a trace, sessions or this client."""
        send = self.send

        async def counted(request: PromptRequest, intended_ns: int | None) -> RequestRecord:
            point.sent = (point.sent or 0) + 1
            return await send(request, intended_ns)

        if self.workers is not None:
            progress = self.progress
            on_record = progress.request_finished if progress is not None else None
            # A point with fewer streams than workers uses one process per stream.
            processes = min(self.workers.workers, plan.concurrency or self.workers.workers)
            job = replace(self.workers, workers=processes)
            return await run_point_in_workers(job, plan, on_record, into=point.run)
        trace = self.trace
        if trace is not None and trace.dag is not None:
            return await run_dag(counted, trace.dag, point.run)
        if trace is not None:
            assert trace.prompts is not None
            assert trace.pacing is not None
            return await run_trace(counted, trace.prompts, point.run, trace.pacing)
        if self.sessions is not None:
            run = await run_sessions(
                counted, self.sessions, plan, self.next_session, into=point.run
            )
            self.next_session += len({record.session for record in run.records})
            return run
        return await run_point(
            counted, self.factory.build, plan, into=point.run, cut=self.client.cut_in_flight
        )

    async def _ended(self, plan: PointPlan, run: PointRun) -> tuple[bool, PointSummary | None]:
        """The point's summary, kept unless the server went away or the observer objects."""
        result = self.result
        summary = None if await _server_gone(self.client, run.records) else self._summary(run)
        stop_reason = self.observer.point_ended(run.records, summary) if self.observer else None
        if self.progress is not None:
            self.progress.point_ended(summary if stop_reason is None else None)
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
        if self.on_point is not None:
            self.on_point(summary)
        return True, summary

    def _summary(self, run: PointRun) -> PointSummary:
        summary = summarize_run(run, self.slo, self.thresholds or VerdictThresholds())
        if self.sessions is not None or self.trace is not None:
            summary = replace(summary, turns=turn_summaries(run.records))
        if self.trace is not None:
            summary = replace(summary, cached_shares=ttft_by_cached_share(run.records))
        return summary


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
