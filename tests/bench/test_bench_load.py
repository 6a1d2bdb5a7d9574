"""Closed and open loops against the stand-in server; the open-loop schedule on its own."""

from __future__ import annotations

import itertools
import statistics

import pytest
from bench_helpers import run_point_at
from fake_openai_server import FakeOpenAIServer

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.run.load import PointPlan, arrival_offsets_s
from infermeter.bench.run.metrics import summarize_point


def test_closed_loop_keeps_concurrency_at_n(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.ttft_s = 0.010
    fake_server.config.itl_s = 0.002
    run = run_point_at(
        fake_server.url, PointPlan(concurrency=4, num_requests=16, warmup_requests=4)
    )
    assert fake_server.stats.max_in_flight == 4
    assert len(run.records) == 20
    # While requests remain, every measured send happens with the other 3 slots busy.
    measured = [r for r in run.records if not r.warmup][:12]
    for record in measured:
        busy = sum(
            1
            for other in run.records
            if other is not record and other.send_ns <= record.send_ns < other.end_ns
        )
        assert busy == 3


def test_closed_loop_warmup_requests_are_marked_and_excluded(
    fake_server: FakeOpenAIServer,
) -> None:
    run = run_point_at(fake_server.url, PointPlan(concurrency=2, num_requests=5, warmup_requests=3))
    assert [r.index for r in run.records] == list(range(8))
    assert [r.warmup for r in run.records] == [True] * 3 + [False] * 5
    assert summarize_point(run.records, concurrency=2).completed == 5


def test_closed_loop_point_is_bounded_by_duration(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.ttft_s = 0.050
    plan = PointPlan(concurrency=2, num_requests=1000, duration_s=0.3, warmup_requests=0)
    run = run_point_at(fake_server.url, plan)
    assert 8 <= len(run.records) <= 14  # about 0.3 s / 50 ms × 2 slots
    assert run.wall_s < 0.45


def test_closed_loop_uses_first_index_for_unique_prompts(fake_server: FakeOpenAIServer) -> None:
    run = run_point_at(
        fake_server.url,
        PointPlan(concurrency=1, num_requests=2, warmup_requests=1, first_index=40),
    )
    assert [r.index for r in run.records] == [40, 41, 42]


def test_open_loop_schedule_is_reproducible_from_seed() -> None:
    first = arrival_offsets_s(5.0, seed=7, count=50)
    assert first == arrival_offsets_s(5.0, seed=7, count=50)
    assert first != arrival_offsets_s(5.0, seed=8, count=50)
    assert first[0] == 0.0
    assert first == sorted(first)


@pytest.mark.parametrize("burstiness", [1.0, 0.25, 4.0])
def test_open_loop_schedule_mean_rate_is_the_target(burstiness: float) -> None:
    offsets = arrival_offsets_s(20.0, seed=1, burstiness=burstiness, count=20_000)
    assert (len(offsets) - 1) / offsets[-1] == pytest.approx(20.0, rel=0.03)


def test_open_loop_schedule_burstiness_sets_gap_variation() -> None:
    def variation(burstiness: float) -> float:
        offsets = arrival_offsets_s(10.0, seed=3, burstiness=burstiness, count=5_000)
        gaps = [b - a for a, b in itertools.pairwise(offsets)]
        return statistics.stdev(gaps) / statistics.mean(gaps)

    assert variation(1.0) == pytest.approx(1.0, abs=0.1)  # Poisson: exponential gaps
    assert variation(0.25) > 1.5 > variation(1.0) > 0.7 > variation(4.0)


def test_open_loop_schedule_bounded_by_duration_after_warmup() -> None:
    offsets = arrival_offsets_s(50.0, seed=2, warmup=10, duration_s=2.0)
    assert offsets[-1] - offsets[10] < 2.0
    assert len(offsets) == pytest.approx(10 + 100, abs=35)


def test_open_loop_records_intended_and_actual_send_times(fake_server: FakeOpenAIServer) -> None:
    fake_server.config.itl_s = 0.001
    plan = PointPlan(request_rate=100.0, num_requests=40, warmup_requests=5, seed=4)
    run = run_point_at(fake_server.url, plan)
    offsets = arrival_offsets_s(100.0, seed=4, count=45)
    start = run.records[0].intended_send_ns
    assert start is not None
    intended = [(r.intended_send_ns or 0) - start for r in run.records]
    assert intended == [int(o * 1e9) for o in offsets]
    point = summarize_point(run.records, request_rate=100.0)
    assert point.completed == 40
    assert point.send_lag_ms is not None
    assert point.send_lag_ms.p50 is not None
    assert 0 <= point.send_lag_ms.p50 < 5


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"concurrency": 0, "num_requests": 1}, "--concurrency"),
        ({"request_rate": -1.0, "num_requests": 1}, "--request-rate"),
        ({"concurrency": 1}, None),
        ({"concurrency": 1, "request_rate": 1.0, "num_requests": 1}, None),
    ],
)
def test_point_plan_rejects_unusable_settings(options: dict[str, object], option: str) -> None:
    with pytest.raises(BenchConfigError) as caught:
        PointPlan(**options)  # type: ignore[arg-type]
    assert caught.value.option == option
