"""Per-request records → a load point's figures, on hand-made records with known timings."""

from __future__ import annotations

import pytest
from bench_helpers import assert_documented_point

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.client.stream import ErrorKind
from infermeter.bench.run.distribution import percentile, summarize
from infermeter.bench.run.metrics import summarize_point
from infermeter.bench.run.request_figures import chunk_token_counts, token_gaps_s, tpot_s
from infermeter.registry.models import Slo

MS = 1_000_000  # nanoseconds per millisecond


def _record(
    index: int = 0,
    *,
    ttft_ms: float = 50,
    gaps_ms: tuple[float, ...] = (10,) * 9,
    output_tokens: int | None = None,
    chunk_tokens: list[int] | None = None,
    chunk_chars: list[int] | None = None,
    send_ms: float = 0,
    intended_ms: float | None = None,
    expected: int | None = None,
    error: ErrorKind | None = None,
) -> RequestRecord:
    send_ns = int(send_ms * MS)
    times = [send_ns + int(ttft_ms * MS)]
    for gap in gaps_ms:
        times.append(times[-1] + int(gap * MS))
    return RequestRecord(
        index=index,
        send_ns=send_ns,
        end_ns=times[-1] + MS,
        intended_send_ns=None if intended_ms is None else int(intended_ms * MS),
        token_times_ns=times,
        chunk_chars=chunk_chars or [4] * len(times),
        chunk_tokens=chunk_tokens,
        output_tokens=len(times) if output_tokens is None else output_tokens,
        client_output_tokens=len(times),
        input_tokens=8,
        expected_output_tokens=expected,
        error=error,
    )


@pytest.mark.parametrize(
    ("q", "expected"),
    [(0, 1.0), (50, 2.5), (90, 3.7), (99, 3.97), (100, 4.0)],
)
def test_percentile_interpolates_linearly_like_numpy(q: float, expected: float) -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], q) == pytest.approx(expected)


def test_summarize_reports_milliseconds_with_n_and_max() -> None:
    stats = summarize([0.010, 0.020, 0.030])
    assert stats.n == 3
    assert stats.mean == pytest.approx(20)
    assert stats.p50 == pytest.approx(20)
    assert stats.max == pytest.approx(30)


def test_summarize_of_nothing_is_empty() -> None:
    assert summarize([]).as_json() == {
        "n": 0,
        "mean": None,
        "p50": None,
        "p90": None,
        "p95": None,
        "p99": None,
        "max": None,
    }


def test_token_gaps_spread_chunk_gap_over_server_counted_tokens() -> None:
    record = _record(gaps_ms=(20, 30), chunk_tokens=[2, 4, 3], output_tokens=9)
    gaps_ms = [round(g * 1000, 6) for g in token_gaps_s(record)]
    assert gaps_ms == [0.0, 5.0, 5.0, 5.0, 5.0, 10.0, 10.0, 10.0]
    assert len(gaps_ms) == 9 - 1
    assert sum(gaps_ms) / len(gaps_ms) == pytest.approx((tpot_s(record) or 0) * 1000)


def test_chunk_token_counts_split_usage_by_text_length() -> None:
    record = _record(gaps_ms=(10, 10), output_tokens=10, chunk_chars=[4, 12, 4])
    assert chunk_token_counts(record) == [2, 6, 2]


def test_chunk_token_counts_one_per_chunk_when_usage_is_lower() -> None:
    record = _record(gaps_ms=(10, 10), output_tokens=2)
    assert chunk_token_counts(record) == [1, 1, 1]


def test_tpot_divides_decode_time_by_tokens_after_the_first() -> None:
    record = _record(gaps_ms=(10,) * 4, output_tokens=9, chunk_tokens=[1, 2, 2, 2, 2])
    assert tpot_s(record) == pytest.approx(0.040 / 8)


def test_slo_accepts_only_successful_requests_within_every_limit() -> None:
    records = [
        _record(0, ttft_ms=50),  # meets everything
        _record(1, ttft_ms=300),  # TTFT too slow
        _record(2, gaps_ms=(40,) * 9),  # TPOT too slow
        _record(3, error=ErrorKind.TIMEOUT),  # a failure is a miss
    ]
    point = summarize_point(records, slo=Slo(ttft_ms=200, tpot_ms=20, e2e_ms=1000))
    assert point.completed == 3
    assert point.failed == 1
    assert point.accepted_requests == 1
    assert point.accepted_output_tokens == 10
    assert point.slo_attainment == pytest.approx(1 / 4)
    assert point.failures_by_kind == {"timeout": 1}


def test_throughput_uses_measured_window_and_excludes_warmup() -> None:
    warmup = _record(0, send_ms=0)
    warmup.warmup = True
    measured = [_record(1, send_ms=1000), _record(2, send_ms=1000)]
    point = summarize_point([warmup, *measured])
    window_s = (50 + 90 + 1) / 1000
    assert point.completed == 2
    assert point.window_s == pytest.approx(window_s)
    assert point.output_token_throughput == pytest.approx(20 / window_s)
    assert point.request_throughput == pytest.approx(2 / window_s)
    assert point.total_token_throughput == pytest.approx((20 + 16) / window_s)


def test_verdict_too_few_requests_names_the_percentiles() -> None:
    point = summarize_point([_record(i) for i in range(15)])
    messages = {v.code: v.message for v in point.verdicts}
    assert "p99 needs >= 100" in messages["too_few_requests"]
    assert "p95 needs >= 20" in messages["too_few_requests"]
    assert "p90" not in messages["too_few_requests"]


def test_no_too_few_requests_verdict_at_100_requests() -> None:
    point = summarize_point([_record(i) for i in range(100)])
    assert "too_few_requests" not in {v.code for v in point.verdicts}


def test_verdict_output_length_not_honoured() -> None:
    point = summarize_point([_record(0, expected=10), _record(1, expected=64)])
    assert point.output_length_mismatch_requests == 1
    assert "output_length_not_honoured" in {v.code for v in point.verdicts}


def test_verdicts_send_lag_and_rate_not_reached() -> None:
    # Offered 100 req/s; sent 25 ms late each, and the server completed one per 50 ms.
    records = [
        _record(i, send_ms=i * 50 + 25, intended_ms=i * 10, gaps_ms=(1,) * 9) for i in range(10)
    ]
    point = summarize_point(records, request_rate=100.0)
    codes = {v.code for v in point.verdicts}
    assert point.send_lag_ms is not None
    assert point.send_lag_ms.p50 is not None
    assert point.send_lag_ms.p50 > 25
    assert {"client_send_lag", "rate_not_reached"} <= codes


def test_open_loop_on_time_has_no_rate_verdicts() -> None:
    records = [
        _record(i, send_ms=i * 10 + 0.5, intended_ms=i * 10, gaps_ms=(1,) * 9) for i in range(10)
    ]
    point = summarize_point(records, request_rate=100.0)
    assert not {"client_send_lag", "rate_not_reached"} & {v.code for v in point.verdicts}
    assert point.achieved_send_rate == pytest.approx(100.0)


def test_verdict_client_saturated_from_cpu_time() -> None:
    point = summarize_point([_record(0)], client_cpu_s=0.2)
    assert "client_saturated" in {v.code for v in point.verdicts}


def test_point_json_has_documented_keys() -> None:
    assert_documented_point(summarize_point([_record(0)], concurrency=1).as_json())


def test_rate_not_reached_ignores_the_drain_of_a_server_that_keeps_up() -> None:
    # 100 requests offered at 20 req/s and sent on time; the server answers each within
    # 20 ms, but the last ten have long outputs and finish 3 s later (the drain).
    records = [
        _record(
            i,
            send_ms=i * 50,
            intended_ms=i * 50,
            ttft_ms=20,
            gaps_ms=(300,) * 10 if i >= 90 else (5,) * 9,
        )
        for i in range(100)
    ]
    point = summarize_point(records, request_rate=20.0)
    assert point.achieved_first_token_rate == pytest.approx(20.0, rel=0.01)
    assert point.achieved_completion_rate is not None
    assert point.achieved_completion_rate < 18.0  # the drain stretches the completions
    assert "rate_not_reached" not in {v.code for v in point.verdicts}


def test_rate_not_reached_when_the_server_falls_behind() -> None:
    # Offered 20 req/s, but the server starts one request per 100 ms: its queue grows.
    records = [
        _record(i, send_ms=i * 50, intended_ms=i * 50, ttft_ms=20 + i * 50, gaps_ms=(5,) * 9)
        for i in range(100)
    ]
    point = summarize_point(records, request_rate=20.0)
    assert point.achieved_first_token_rate == pytest.approx(10.0, rel=0.01)
    verdict = next(v for v in point.verdicts if v.code == "rate_not_reached")
    assert "10.00 req/s against 20.00 req/s offered" in verdict.message


def test_output_length_from_chunks_without_usage_is_only_a_lower_bound() -> None:
    # No usage from the server and 3 tokens per chunk: 4 chunks for 10 tokens asked.
    short = _record(0, gaps_ms=(10,) * 3, expected=10)
    short.output_tokens = None
    point = summarize_point([short])
    assert point.usage_missing_requests == 1
    assert "output_length_not_honoured" not in {v.code for v in point.verdicts}
    longer = _record(1, gaps_ms=(10,) * 11, expected=10)  # 12 chunks: at least 12 tokens
    longer.output_tokens = None
    point = summarize_point([short, longer])
    assert point.output_length_mismatch_requests == 1
    assert "output_length_not_honoured" in {v.code for v in point.verdicts}


def test_output_length_with_an_exact_client_count_and_no_usage_is_checked() -> None:
    record = _record(0, gaps_ms=(10,) * 3, expected=10)
    record.output_tokens = None
    record.client_output_tokens = 7
    record.client_count_exact = True  # counted with the tokenizer
    assert summarize_point([record]).output_length_mismatch_requests == 1


def _span(index: int, send_s: float, end_s: float) -> RequestRecord:
    second = 1_000_000_000
    return RequestRecord(
        index=index,
        send_ns=int(send_s * second),
        end_ns=int(end_s * second),
        token_times_ns=[int(send_s * second) + 1, int(end_s * second) - 1],
        chunk_chars=[4, 4],
        output_tokens=2,
        client_output_tokens=2,
    )


def test_achieved_concurrency_mean_shows_the_drain_of_a_closed_loop() -> None:
    # Four slots, two 1 s requests each; slot 0's second request takes 3 s (the drain).
    records = [_span(slot, 0, 1) for slot in range(4)]
    records += [_span(4, 1, 4)] + [_span(4 + slot, 1, 2) for slot in range(1, 4)]
    point = summarize_point(records, concurrency=4)
    assert point.window_s == pytest.approx(4.0)
    assert point.achieved_concurrency_mean == pytest.approx(10 / 4)  # 10 busy seconds in 4
    held = summarize_point([_span(s, 0, 1) for s in range(4)], concurrency=4)
    assert held.achieved_concurrency_mean == pytest.approx(4.0)


def test_achieved_concurrency_mean_counts_warmup_requests_still_in_flight() -> None:
    warmup = _span(0, 0, 2)
    warmup.warmup = True
    ended = _span(2, 0, 1)  # a warm-up request over before the window opens
    ended.warmup = True
    point = summarize_point([warmup, ended, _span(1, 1, 2)], concurrency=2)
    assert point.achieved_concurrency_mean == pytest.approx(2.0)  # both in flight over [1, 2]
    assert point.warmup_in_flight == 1


def test_client_saturated_judges_the_busiest_worker_process_not_their_sum() -> None:
    from infermeter.bench.run.load import PointPlan, PointRun
    from infermeter.bench.run.point_loop import summarize_run

    records = [_span(i, 0, 1) for i in range(4)]
    plan = PointPlan(concurrency=4, num_requests=4)
    three_workers = PointRun(plan, records, client_cpu_s=2.4, busiest_client_cpu_s=0.8)
    point = summarize_run(three_workers, Slo())
    assert point.client_cpu_fraction == pytest.approx(0.8)
    assert "client_saturated" not in {v.code for v in point.verdicts}
    one_busy = PointRun(plan, records, client_cpu_s=1.2, busiest_client_cpu_s=0.95)
    assert "client_saturated" in {v.code for v in summarize_run(one_busy, Slo()).verdicts}
