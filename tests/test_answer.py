"""calculators.accepted and calculators.answer: what "accepted" means for each kind of evidence,
and rankings that are homogeneous, priced and honest about their prices."""

from dataclasses import replace

import pytest

from infermeter.calculators.accepted import Point, Records, Slo, accept, accepted_at_own_slo
from infermeter.calculators.answer import (
    PRESETS,
    Price,
    Question,
    answer,
    break_even,
    miss_heading,
    rank,
)

SERVER = Point(
    result_id="server",
    point_index=0,
    lane="mlperf",
    model="m",
    workload_key="w",
    workload="dataset",
    precision="fp8",
    scenario="mlperf_server",
    gpu="h100-sxm",
    gpu_count=8,
    load="highest rate",
    output_tokens_per_s=20_000.0,
    own_slo=Slo(99.0, ttft_ms=2000.0, tpot_ms=200.0),
)
STATIC = Point(
    result_id="static",
    point_index=0,
    lane="reported",
    model="m",
    workload_key="w2",
    workload="128 → 2,048 tokens",
    precision="fp8",
    scenario="static_batch",
    gpu="mi300x",
    gpu_count=8,
    load="static batch of 8",
    latency={"e2e_ms": {"mean": 18_898.0}},
    static_batch_size=8,
    static_output_tokens=2048,
)
OFFLINE = replace(SERVER, result_id="offline", scenario="offline", own_slo=None, lane="reported")
SWEEP = replace(
    SERVER,
    result_id="sweep",
    scenario="closed",
    lane="measured",
    own_slo=None,
    latency={"ttft_ms": {"mean": 300.0, "p50": 250.0, "p99": 900.0}, "tpot_ms": {"p95": 30.0}},
)


@pytest.mark.parametrize(
    ("slo", "qualifies"),
    [
        (Slo(99.0, ttft_ms=2000.0, tpot_ms=200.0), True),  # its own SLO
        (Slo(95.0, ttft_ms=3000.0, tpot_ms=250.0), True),  # looser on every bound
        (Slo(99.0, ttft_ms=2000.0), True),  # no TPOT bound is looser
        (Slo(99.0, ttft_ms=1000.0, tpot_ms=200.0), False),  # tighter TTFT
        (Slo(99.9, ttft_ms=2000.0, tpot_ms=200.0), False),  # a higher percentile
        (Slo(99.0, ttft_ms=2000.0, tpot_ms=200.0, e2e_ms=60_000.0), False),  # E2E unbounded
    ],
)
def test_accept_server_answers_looser_or_equal_slos_only(slo: Slo, qualifies: bool) -> None:
    acceptance = accept(SERVER, slo)
    assert (acceptance.accepted_tokens_per_s == 20_000.0) is qualifies
    assert (acceptance.miss is None) is qualifies


def test_accept_server_miss_names_the_looser_bound() -> None:
    miss = accept(SERVER, Slo(99.0, ttft_ms=1000.0, tpot_ms=200.0)).miss
    assert miss is not None
    assert (miss.metric, miss.measured_ms, miss.bound_ms) == ("ttft_ms", 2000.0, 1000.0)


def test_accept_offline_answers_the_batch_question_only() -> None:
    assert accept(OFFLINE, Slo()).accepted_tokens_per_s == 20_000.0
    assert accept(OFFLINE, Slo(99.0, e2e_ms=1e9)).accepted_tokens_per_s is None


def test_accept_a_mean_never_proves_a_percentile() -> None:
    # p99 TTFT 900 ms proves p95 ≤ 1 s; the mean (300 ms) never proves p99 ≤ 500 ms
    assert accept(SWEEP, Slo(95.0, ttft_ms=1000.0)).accepted_tokens_per_s == 20_000.0
    assert accept(SWEEP, Slo(99.0, ttft_ms=500.0)).accepted_tokens_per_s is None
    # TPOT stated at p95 only: it proves p90 and p95, not p99
    assert accept(SWEEP, Slo(95.0, tpot_ms=40.0)).accepted_tokens_per_s == 20_000.0
    missed = accept(SWEEP, Slo(99.0, tpot_ms=40.0)).miss
    assert missed is not None
    assert "not stated" in missed.reason


def test_accept_server_answers_a_tighter_slo_by_the_percentiles_it_measured() -> None:
    """Its throughput was measured at a load whose stated p99s were these: where they meet the
    reader's tighter bounds, that load proves them too; where one does not, the miss is that
    measured figure, not the looser bound of its own SLO."""
    measured = replace(SERVER, latency={"ttft_ms": {"p99": 800.0}, "tpot_ms": {"p99": 150.0}})
    tighter = accept(measured, Slo(99.0, ttft_ms=1000.0, tpot_ms=160.0))
    assert tighter.accepted_tokens_per_s == 20_000.0
    assert tighter.basis == (
        "its stated percentiles meet every bound: TTFT p99 800 ms, TPOT p99 150 ms"
    )
    missed = accept(measured, Slo(99.0, ttft_ms=700.0, tpot_ms=160.0)).miss
    assert missed is not None
    assert (missed.metric, missed.measured_ms, missed.bound_ms) == ("ttft_ms", 800.0, 700.0)
    # a percentile it did not state proves nothing: the miss is its own SLO's, as before
    higher = accept(measured, Slo(99.9, ttft_ms=1000.0)).miss
    assert higher is not None
    assert higher.reason == "its SLO is at p99, below p99.9"
    assert accept(measured, Slo(99.0, ttft_ms=2000.0, tpot_ms=200.0)).basis == (
        "the whole throughput at its own SLO, as tight as yours or tighter"
    )


def test_accept_static_batch_derives_its_figures_and_says_so() -> None:
    tokens = 8 * 2048 / 18.898
    # E2E of each request is the batch's time; TPOT at most that ÷ 2047 (9.2 ms)
    fine = accept(STATIC, Slo(99.0, tpot_ms=10.0, e2e_ms=20_000.0))
    assert fine.accepted_tokens_per_s == pytest.approx(tokens)
    assert fine.derived
    assert "derived" in fine.basis
    assert accept(STATIC, Slo(99.0, tpot_ms=9.0)).accepted_tokens_per_s is None
    assert accept(STATIC, Slo(99.0, ttft_ms=1000.0)).accepted_tokens_per_s is None
    own = accepted_at_own_slo(STATIC)
    assert own is not None
    assert own.accepted_tokens_per_s == pytest.approx(tokens)


def test_accept_static_batch_upper_bounds_above_the_bound_are_not_misses_by_a_figure() -> None:
    """The batch's time bounds a request's TTFT (and its ÷ (output − 1) the TPOT) only from
    above: above the reader's bound, it says nothing of the TTFT, so no figure is shown or
    ranked; E2E is the batch's time exactly, a miss by its figure."""
    ttft = accept(STATIC, Slo(99.0, ttft_ms=1000.0)).miss
    assert ttft is not None
    assert (ttft.metric, ttft.measured_ms, ttft.ratio) == (None, None, None)
    assert ttft.reason == (
        "TTFT at p99 not stated: the batch's time (18,898 ms) bounds it only from above"
    )
    tpot = accept(STATIC, Slo(99.0, tpot_ms=9.0)).miss
    assert tpot is not None
    assert tpot.ratio is None
    assert tpot.reason.startswith("TPOT at p99 not stated: batch time ÷ (output − 1) (9 ms)")
    e2e = accept(STATIC, Slo(99.0, e2e_ms=10_000.0)).miss
    assert e2e is not None
    assert (e2e.metric, e2e.measured_ms, e2e.bound_ms) == ("e2e_ms", 18_898.0, 10_000.0)
    # so the nearest miss is a batch whose TTFT was measured, however far it missed
    timed = replace(STATIC, result_id="timed", latency={"ttft_ms": {"p99": 40_000.0}})
    found = answer([STATIC, timed], PRICES, Question("m", Slo(99.0, ttft_ms=1000.0)))
    assert [a.nearest_miss and a.nearest_miss[0].result_id for a in found] == ["timed"]


def test_accept_per_request_records_need_the_readers_percentile_of_requests() -> None:
    records = replace(
        SWEEP,
        latency={},
        records_slo=Slo(100.0, ttft_ms=500.0),
        records_accepted_tokens_per_s=15_000.0,
        records_accepted_share=0.96,
    )
    assert accept(records, Slo(95.0, ttft_ms=800.0)).accepted_tokens_per_s == 15_000.0
    assert accept(records, Slo(99.0, ttft_ms=800.0)).accepted_tokens_per_s is None  # 96 % < 99
    assert accept(records, Slo(95.0, ttft_ms=400.0)).accepted_tokens_per_s is None  # tighter


# 10 requests: 9 succeeded (tokens, TTFT, TPOT, E2E), 1 failed.
EACH = Records(
    failed=1,
    output_tokens=(100, 100, 100, 100, 100, 200, 200, 200, 1),  # 1,101 in all
    ttft_ms=(100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0),
    tpot_ms=(10.0, 10.0, 20.0, 20.0, 30.0, 30.0, 40.0, 40.0, None),
    e2e_ms=(1.0e3, 2.0e3, 3.0e3, 4.0e3, 5.0e3, 6.0e3, 7.0e3, 8.0e3, 0.9e3),
)


@pytest.mark.parametrize(
    ("slo", "met"),
    [
        (Slo(50.0, ttft_ms=550.0), (0, 1, 2, 3, 4)),  # 5 of 10: p50 exactly
        (Slo(80.0, ttft_ms=2000.0), (0, 1, 2, 3, 4, 5, 6, 7, 8)),  # every success
        (Slo(50.0, ttft_ms=2000.0, tpot_ms=30.0), (0, 1, 2, 3, 4, 5, 8)),  # one token: no TPOT
        (Slo(30.0, ttft_ms=2000.0, e2e_ms=3000.0), (0, 1, 2, 8)),
        (Slo(60.0, ttft_ms=550.0), None),  # 5 of 10 < p60
        (Slo(95.0, ttft_ms=5000.0), None),  # the failure alone leaves 90 %
    ],
)
def test_accept_per_request_records_count_the_requests_each_slo_accepts(
    slo: Slo, met: tuple[int, ...] | None
) -> None:
    records = replace(SWEEP, output_tokens_per_s=1101.0, records=EACH)
    # through the JSON the browser reads, as the site publishes it
    again = Point.from_dict(records.as_dict())
    assert again == records
    found = accept(again, slo)
    if met is None:
        assert found.accepted_tokens_per_s is None
        assert found.miss is not None
        return
    tokens = sum(EACH.output_tokens[i] for i in met)
    assert found.accepted_tokens_per_s == pytest.approx(tokens)  # 1,101 tokens/s in all
    assert f"the {len(met)} of 10 requests" in found.basis


def test_accept_per_request_records_miss_names_the_bound_missed_at_the_percentile() -> None:
    records = replace(SWEEP, records=EACH)
    miss = accept(records, Slo(90.0, ttft_ms=500.0)).miss
    assert miss is not None
    # the 9th of 10 requests' TTFT is p90's
    assert (miss.metric, miss.measured_ms, miss.bound_ms) == ("ttft_ms", 900.0, 500.0)
    failed = accept(records, Slo(95.0, ttft_ms=5000.0)).miss
    assert failed is not None
    assert "1 of 10 requests failed" in failed.reason


PRICES = [
    Price("h100", "h100-sxm", "on_demand", 2.0, "p1", "2026-10", "low"),
    Price("h200", "h200-sxm", "on_demand", 3.0, "p2", "2026-10", "medium"),
]


def test_rank_cheapest_first_with_ratio_and_break_even() -> None:
    h200 = replace(SERVER, result_id="h200", gpu="h200-sxm", output_tokens_per_s=25_000.0)
    rows = rank([SERVER, h200], PRICES, Slo(99.0, ttft_ms=2000.0), "on_demand")
    h100_usd = 2.0 * 8 / (20_000 * 3600) * 1e6
    h200_usd = 3.0 * 8 / (25_000 * 3600) * 1e6
    assert [r.point.gpu for r in rows] == ["h100-sxm", "h200-sxm"]
    assert rows[0].usd_per_million_accepted == pytest.approx(h100_usd)
    assert rows[1].ratio_to_winner == pytest.approx(h200_usd / h100_usd)
    # the winner's price is low-confidence: above the break-even the runner-up would win
    price = break_even(rows)
    assert price is not None
    assert price * 8 / (20_000 * 3600) * 1e6 == pytest.approx(h200_usd)


def test_answer_never_ranks_across_precision_scenario_or_lane() -> None:
    fp4 = replace(SERVER, result_id="fp4", precision="fp4", output_tokens_per_s=90_000.0)
    interactive = replace(
        SERVER, result_id="i", scenario="mlperf_interactive", own_slo=Slo(99.0, 450.0, 40.0)
    )
    reported = replace(SERVER, result_id="r", lane="reported")
    points = [SERVER, fp4, interactive, reported]
    answers = answer(points, PRICES, Question("m", Slo(99.0, ttft_ms=2000.0, tpot_ms=200.0)))
    assert len(answers) == 4
    for found in answers:
        assert len(found.rows) == 1
        point = found.rows[0].point
        assert (point.precision, point.scenario, point.lane) == (
            found.precision,
            found.scenario,
            found.lane,
        )


def test_answer_nearest_miss_is_the_closest_point() -> None:
    near = replace(SERVER, result_id="near", own_slo=Slo(99.0, ttft_ms=1200.0, tpot_ms=50.0))
    found = answer([SERVER, near], PRICES, Question("m", Slo(99.0, ttft_ms=1000.0)))
    assert len(found) == 1
    assert not found[0].rows
    assert found[0].nearest_miss is not None
    assert found[0].nearest_miss[0].result_id == "near"


def test_answer_says_when_no_point_of_a_group_has_a_figure_to_miss_by() -> None:
    """Offline points answer the batch question only: against a TTFT bound none has a figure,
    so none is "nearest"; the answer said "nearest miss" of whichever came first by id."""
    second = replace(OFFLINE, result_id="offline-2", gpu="a100-80gb-sxm")
    question = Question("m", Slo(99.0, ttft_ms=1000.0))
    (both,) = answer([OFFLINE, second], PRICES, question)
    assert both.nearest_miss is not None
    assert (both.size, both.miss_measured) == (2, False)
    assert miss_heading(both) == (
        "none of its 2 points has a figure to hold against these bounds; one"
    )
    assert both.as_dict()["nearest_miss"]["measured"] is False
    assert both.as_dict()["group_points"] == 2
    (alone,) = answer([OFFLINE], PRICES, question)
    assert miss_heading(alone) == "its one point has no figure to hold against these bounds"
    # a miss by a measured figure is the nearest, named so
    (server,) = answer([SERVER], PRICES, question)
    assert (server.miss_measured, miss_heading(server)) == (True, "nearest miss")


def test_answer_estimate_only_where_nothing_qualifies() -> None:
    asked = []

    def estimator(question: Question, workload_key: str, precision: str) -> None:
        asked.append((workload_key, precision))

    answer([SERVER], PRICES, Question("m", Slo(99.0, ttft_ms=2000.0)), estimator)
    assert asked == []
    answer([SERVER], PRICES, Question("m", Slo(99.0, ttft_ms=100.0)), estimator)
    assert asked == [("w", "fp8")]


def test_presets_state_their_bounds_once() -> None:
    """A preset's bounds are its SLO's text; its `why` (shown beside that text) gives the
    reasons only: the preset pages said "TTFT ≤ 6,000 ms … TTFT ≤ 6 s" twice."""
    assert [p.id for p in PRESETS if p.slo.is_batch] == ["batch"]
    for preset in PRESETS:
        assert "≤" not in preset.why, preset.id
        assert "latency bound" not in preset.why.lower(), preset.id  # batch's "none (batch)"


def test_slo_text_keeps_the_bound_the_reader_set() -> None:
    """A bound with a fraction is said as set: `--slo-tpot-ms 7.5` read "TPOT ≤ 8 ms", and 0.1
    read "≤ 0 ms", a bound no one asked for."""
    assert Slo(tpot_ms=7.5).text() == "p99 TPOT ≤ 7.5 ms"
    assert Slo(95, ttft_ms=0.1).text() == "p95 TTFT ≤ 0.1 ms"
    assert Slo(ttft_ms=1000, e2e_ms=1e9).text() == "p99 TTFT ≤ 1,000 ms, E2E ≤ 1,000,000,000 ms"
    assert Slo(tpot_ms=1234.5).text() == "p99 TPOT ≤ 1,234.5 ms"
