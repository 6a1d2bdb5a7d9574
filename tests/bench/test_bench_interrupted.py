"""`bench.run.interrupted`: the point under way when a run is stopped, summarized from the
requests that finished before the stop (records as `bench.client.client` writes them)."""

from __future__ import annotations

from typing import Any

import pytest

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.run.interrupted import LivePoint, interrupted_summary
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.point_summary import VerdictThresholds
from infermeter.registry.models import Slo

MS = 1_000_000


def _record(index: int, start_ms: int, *, warmup: bool = False, ok: bool = True) -> RequestRecord:
    tokens = [(start_ms + 10 + 5 * k) * MS for k in range(4)] if ok else []
    return RequestRecord(
        index=index,
        send_ns=start_ms * MS,
        end_ns=(start_ms + 25) * MS,
        warmup=warmup,
        token_times_ns=tokens,
        chunk_chars=[4] * len(tokens),
        output_tokens=4 if ok else None,
        client_output_tokens=len(tokens),
        prompt_tokens=16,
        error=None if ok else "http_status",
        error_detail="" if ok else "HTTP 500",
    )


def _point(records: list[RequestRecord], sent: int | None, **plan: Any) -> LivePoint:
    point = LivePoint(PointPlan(concurrency=2, warmup_requests=1, **plan), sent=sent)
    point.run.records.extend(records)
    return point


def test_interrupted_summary_covers_what_finished_and_says_what_was_dropped() -> None:
    records = [_record(0, 0, warmup=True), _record(1, 30), _record(2, 60), _record(3, 100)]
    point = _point(records, sent=6, num_requests=100)
    summary = interrupted_summary(point, "terminated (SIGTERM)", Slo(), VerdictThresholds())
    assert summary is not None
    assert (summary.concurrency, summary.completed, summary.failed) == (2, 3, 0)
    assert summary.window_s == pytest.approx(0.095)  # first measured send to the last end
    (verdict,) = [v for v in summary.verdicts if v.code == "interrupted"]
    assert verdict.message == (
        "the run was terminated (SIGTERM) during this point, which was to measure 100 "
        "requests: its figures are those of the 3 measured requests that finished before the "
        "stop; the stop dropped 2 requests in flight, and its window ends with the last of them; "
        "it is not a full point"
    )


def test_interrupted_summary_counts_one_request_as_one() -> None:
    # It said "the 1 measured requests that finished before the stop; 1 in flight at the stop
    # were dropped".
    point = _point([_record(0, 0, warmup=True), _record(1, 30)], sent=3, num_requests=1)
    summary = interrupted_summary(point, "interrupted", Slo(), VerdictThresholds())
    assert summary is not None
    (verdict,) = [v for v in summary.verdicts if v.code == "interrupted"]
    assert verdict.message == (
        "the run was interrupted during this point, which was to measure 1 request: its figures "
        "are those of the 1 measured request that finished before the stop; the stop dropped 1 "
        "request in flight, and its window ends with the last of them; it is not a full point"
    )


def test_interrupted_summary_of_worker_processes_names_no_in_flight_count() -> None:
    point = _point([_record(1, 0), _record(2, 30)], sent=None, duration_s=30)
    summary = interrupted_summary(point, "interrupted", Slo(), VerdictThresholds())
    assert summary is not None
    assert summary.client_cpu_fraction is None  # the workers' CPU time never came back
    (verdict,) = [v for v in summary.verdicts if v.code == "interrupted"]
    assert "which was to run 30 s: " in verdict.message
    assert "in flight" not in verdict.message


@pytest.mark.parametrize(
    "records",
    [[], [_record(0, 0, warmup=True)], [_record(1, 0, ok=False), _record(2, 5, ok=False)]],
    ids=["nothing", "warm-up only", "only failures"],
)
def test_interrupted_point_without_a_completed_measured_request_is_not_kept(
    records: list[RequestRecord],
) -> None:
    point = _point(records, sent=3, num_requests=10)
    assert interrupted_summary(point, "interrupted", Slo(), VerdictThresholds()) is None
