"""The load point under way when Ctrl-C or SIGTERM stops a run: kept with what finished.

A point's records grow as its requests finish (`bench.run.load.run_point`'s `into`). When the run
is stopped from outside (`bench.session.interrupts`), the requests that finished before the stop are
still measurements: `interrupted_summary` summarizes them as any point is summarized (the
window runs from the first measured send to the end of the last finished request, so it ends
before the stop) and adds the `interrupted` verdict, which says the point is cut short, how
many requests it holds and how many were in flight and dropped. The registry's index and the
site keep such a point on its result's page but never rank it (`registry.index`).

A point in which no measured request completed has no figures: it is not kept (its records
still go to the raw records).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from infermeter.bench.run.load import PointPlan, PointRun
from infermeter.bench.run.metrics import summarize_point
from infermeter.bench.run.point_summary import PointSummary, Verdict, VerdictThresholds
from infermeter.calculators.plural import counted
from infermeter.registry.models import Slo
from infermeter.registry.models.measurements import INTERRUPTED_VERDICT


@dataclass
class LivePoint:
    """The point being measured: its records so far (`run`), the client's CPU time when it
    started, and how many requests have left (None where worker processes send them)."""

    plan: PointPlan
    run: PointRun = field(init=False)
    cpu_start_s: float = field(default_factory=time.process_time)
    sent: int | None = 0

    def __post_init__(self) -> None:
        self.run = PointRun(self.plan)


def interrupted_summary(
    point: LivePoint,
    stop_reason: str,
    slo: Slo,
    thresholds: VerdictThresholds,
) -> PointSummary | None:
    """The summary of the requests of `point` that finished before the run was stopped
    (`stop_reason`: `interrupted` or `terminated (SIGTERM)`), with the `interrupted` verdict;
    None when no measured request completed."""
    records = list(point.run.records)
    measured = [record for record in records if not record.warmup]
    if not any(record.ok for record in measured):
        return None
    plan = point.plan
    cpu_s = time.process_time() - point.cpu_start_s if point.sent is not None else None
    summary = summarize_point(
        records,
        concurrency=plan.concurrency,
        request_rate=plan.request_rate,
        slo=slo,
        client_cpu_s=cpu_s,
        thresholds=thresholds,
    )
    summary.verdicts.append(
        Verdict(INTERRUPTED_VERDICT, _message(point, stop_reason, len(measured)))
    )
    return summary


def _message(point: LivePoint, stop_reason: str, measured: int) -> str:
    plan = point.plan
    planned = ""
    if plan.duration_s is not None:
        planned = f", which was to run {plan.duration_s:g} s"
    elif plan.num_requests is not None:
        planned = f", which was to measure {counted(plan.num_requests, 'request')}"
    dropped = ""
    if point.sent is not None:
        in_flight = point.sent - len(point.run.records)
        dropped = (
            f"; the stop dropped {counted(in_flight, 'request')} in flight" if in_flight > 0 else ""
        )
    return (
        f"the run was {stop_reason} during this point{planned}: its figures are those of the "
        f"{counted(measured, 'measured request')} that finished before the stop{dropped}, and "
        "its window ends with the last of them; it is not a full point"
    )
