"""registry.answers over the whole registry, and `infermeter registry answer`: accepted figures
in the index, homogeneous answers, estimates no real result beats, one-line errors."""

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from infermeter.calculators.accepted import Slo, accept, own_slo, static_batch_tokens_per_s
from infermeter.calculators.answer import (
    ROOFLINE_BOUND,
    NoEstimate,
    Question,
    answer,
    cheapest_price,
)
from infermeter.registry.answers import (
    Evidence,
    answer_estimator,
    answers_json,
    every_estimate,
    load_evidence,
    site_answers,
)
from infermeter.registry.index import build_index
from infermeter.registry.index_row import IndexRow
from infermeter.registry.store import parse_result, with_content_id, write_result
from tests.cli_helpers import invoke, json_output
from tests.registry_checkout import empty_registry

REPO = Path(__file__).resolve().parents[2]


@cache
def _evidence() -> Evidence:
    return load_evidence(REPO)


@cache
def _index() -> tuple[IndexRow, ...]:
    return tuple(build_index(REPO)[0])


def test_index_every_mlperf_server_and_interactive_point_is_accepted_at_its_own_slo() -> None:
    """Every server-at-SLO point's whole throughput is accepted at its own SLO, and priced on
    demand wherever its GPU has a price; the points without one are exactly those of the GPUs
    the price catalog has no on-demand price for (listed in the message when that changes)."""
    every = [row for row in _index() if row.scenario == "server_at_slo"]
    # A benchmark measured in samples (MLPerf's qwen3-vl) has no tokens to accept.
    samples_only = [row for row in every if row.output_tokens_per_s is None]
    assert {row.accepted_output_tokens_per_s for row in samples_only} <= {None}
    servers = [row for row in every if row.output_tokens_per_s is not None]
    assert len(servers) > 200
    prices = _evidence().prices
    unpriced = Counter[str]()
    for row in servers:
        assert row.accepted_output_tokens_per_s == pytest.approx(row.output_tokens_per_s, rel=1e-5)
        if cheapest_price(prices, row.gpu, "on_demand") is None:
            unpriced[row.gpu] += 1
            continue
        assert row.on_demand.usd_per_million_accepted_tokens == pytest.approx(
            row.on_demand.usd_per_million_output_tokens, rel=1e-5
        ), row.result_id
        assert row.on_demand.usd_per_million_accepted_tokens
    # the index agrees: no on-demand price id for the others
    without = {row.on_demand.price_id is None for row in servers if row.gpu in unpriced}
    assert without <= {True}, f"points without a price: {dict(unpriced)}"


def test_index_every_static_batch_with_a_stated_latency_is_accepted() -> None:
    timed = [row for row in _index() if row.scenario == "static_batch" and row.e2e_ms_mean]
    assert len(timed) > 200
    by_id = {(p.result_id, p.point_index): p for p in _evidence().points}
    for row in timed:
        point = by_id[(row.result_id, row.point_index)]
        expected = static_batch_tokens_per_s(point)
        assert expected is not None
        assert row.accepted_output_tokens_per_s == pytest.approx(expected, rel=1e-5)
    # offline points prove no latency: their accepted figure stays empty
    assert all(
        row.accepted_output_tokens_per_s is None for row in _index() if row.scenario == "offline"
    )


def test_every_timed_static_batch_answers_the_reader_slos_it_meets() -> None:
    """A reader SLO at a static batch's own time (E2E, or TPOT derived from it) is answered by
    that batch with its whole throughput and a $ figure wherever its GPU is priced; one 1 %
    tighter is not: the batch is the nearest miss."""
    evidence = _evidence()
    timed = [p for p in evidence.points if p.scenario == "static_batch" and own_slo(p)]
    assert len(timed) > 200
    priced = 0
    for point in timed:
        batch_ms = point.latency["e2e_ms"]["mean"]
        tokens = static_batch_tokens_per_s(point)
        tpot_ms = (
            batch_ms / (point.static_output_tokens - 1) if point.static_output_tokens > 1 else None
        )
        readers = [Slo(99, e2e_ms=batch_ms)] + ([Slo(95, tpot_ms=tpot_ms)] if tpot_ms else [])
        for slo in readers:
            assert accept(point, slo).accepted_tokens_per_s == pytest.approx(tokens), point
            tighter = Slo(
                slo.percentile, *(v * 0.99 if v else None for v in (None, slo.tpot_ms, slo.e2e_ms))
            )
            assert accept(point, tighter).miss is not None, point
        question = Question(
            point.model, readers[0], "on_demand", point.workload_key, point.precision
        )
        rows = [
            row
            for found in answer(evidence.points, evidence.prices, question)
            if (found.scenario, found.lane) == (point.scenario, point.lane)
            for row in found.rows
            if (row.point.gpu, row.point.gpu_count) == (point.gpu, point.gpu_count)
        ]
        if cheapest_price(evidence.prices, point.gpu, "on_demand") is not None:
            (row,) = rows  # its deployment is ranked, at its best qualifying point
            assert row.usd_per_million_accepted
            assert row.acceptance.accepted_tokens_per_s >= tokens * (1 - 1e-9)
            priced += 1
    assert priced > 200


def test_site_answers_are_homogeneous_and_ranked() -> None:
    document = json.loads(answers_json(site_answers(_evidence())))
    points = {(p.result_id, p.point_index): p for p in _evidence().points}
    answered = 0
    for preset in document["presets"]:
        for found in preset["answers"]:
            usd = [row["usd_per_million_accepted"] for row in found["rows"]]
            assert usd == sorted(usd)
            answered += bool(usd)
            for row in found["rows"] + found["unpriced_rows"]:
                point = points[(row["result_ids"][0], row["evidence"]["point_index"])]
                assert (
                    point.model,
                    point.workload_key,
                    point.precision,
                    point.scenario,
                    point.lane,
                ) == (
                    found["model"],
                    found["workload_key"],
                    found["precision"],
                    found["scenario"],
                    found["lane"],
                )
    assert answered > 20


def test_no_estimate_is_beaten_by_a_real_result() -> None:
    """Over the whole registry: every estimate the site publishes (`every_estimate`: each model ×
    workload × precision × price tier) is a $ per 1M output tokens below every real point's of
    the same precision and workload at the same tier (the closest real point is 1.6x it, so an
    estimate doubled fails)."""
    evidence = _evidence()
    estimates = every_estimate(evidence, answer_estimator(REPO, evidence))
    assert {tier for _m, _w, _p, tier, _k in estimates} == {p.tier for p in evidence.prices}
    groups: dict[tuple[str, str, str], list] = {}
    for point in evidence.points:
        groups.setdefault((point.model, point.workload_key, point.precision), []).append(point)
    checked = Counter[str]()
    for (model, workload_key, precision, tier, _kind), estimate in estimates.items():
        if isinstance(estimate, NoEstimate):
            continue  # no figure: the plan refuses these weights (its reason is shown instead)
        assert (estimate.precision, estimate.tier) == (precision, tier)
        if estimate.kind != ROOFLINE_BOUND:
            continue  # a prediction is not a limit: a real run may beat it (its error says so)
        for point in groups[(model, workload_key, precision)]:
            tokens = static_batch_tokens_per_s(point) or point.output_tokens_per_s
            price = cheapest_price(evidence.prices, point.gpu, tier)
            if not tokens or price is None:
                continue
            real = price.usd_per_gpu_hour * point.gpu_count / (tokens * 3600) * 1e6
            assert real >= estimate.usd_per_million_output_tokens, (model, tier, point.result_id)
            checked[tier] += 1
    assert checked["on_demand"] > 1000
    assert min(checked.values()) > 100, checked


def test_cli_answer_json_ranks_mlperf_server_apart_from_interactive() -> None:
    payload = json_output(
        "registry",
        "answer",
        "--model",
        "llama-2-70b-chat",
        "--slo-ttft-ms",
        "2000",
        "--slo-tpot-ms",
        "200",
        "--no-estimate",
        "--registry",
        str(REPO),
    )
    scenarios = {found["scenario"] for found in payload["answers"] if found["rows"]}
    # the workload's key as the index has it (the output's secret filter once took it for one)
    assert all(re.fullmatch(r"[0-9a-f]{10}", found["workload_key"]) for found in payload["answers"])
    assert {"mlperf_server", "mlperf_interactive"} <= scenarios
    for found in payload["answers"]:
        assert found["slo"] == {
            "percentile": 99.0,
            "ttft_ms": 2000.0,
            "tpot_ms": 200.0,
            "e2e_ms": None,
        }
        ratios = [row["ratio_to_winner"] for row in found["rows"]]
        assert ratios == sorted(ratios)
        assert not ratios or ratios[0] == 1.0


def test_cli_answer_text_names_the_nearest_miss_only_where_one_missed_by_a_figure() -> None:
    """At p95 TTFT ≤ 1 s no Llama 3.1 70B point ranks and none has a figure to miss by (offline
    and static-batch points): the text named whichever came first by id "nearest miss"."""
    args = ("registry", "answer", "--model", "llama-3.1-70b-instruct", "--no-estimate",
            "--registry", str(REPO))  # fmt: skip
    measured = invoke(*args, "--slo-ttft-ms", "100")
    assert measured.exit_code == 0, measured.output
    assert "nearest miss 8 × h100-sxm" in measured.output
    assert "ms against 100 ms" in measured.output
    none = invoke(*args, "--percentile", "95", "--slo-ttft-ms", "1000")
    assert none.exit_code == 0, none.output
    assert "nearest miss" not in none.output
    assert "none of its 11 points has a figure to hold against these bounds; one: " in none.output


def test_cli_answer_text_says_why_each_ranked_point_qualifies() -> None:
    """An MLPerf Server point ranks for a TTFT bound tighter than its own SLO's by the p99 it
    measured; the text showed only its load, "with p99 TTFT ≤ 2000 ms", as if it missed 500 ms."""
    args = ("registry", "answer", "--model", "llama-3.1-8b-instruct", "--precision", "fp8",
            "--slo-ttft-ms", "500", "--slo-tpot-ms", "50", "--no-estimate",
            "--registry", str(REPO))  # fmt: skip
    text, payload = invoke(*args), json_output(*args)
    assert text.exit_code == 0, text.output
    rows = [
        (row["result_ids"][0], row["evidence"]["basis"])
        for found in payload["answers"]
        for row in found["rows"] + found["unpriced_rows"]
    ]
    assert any(basis.startswith("its stated percentiles meet every bound") for _, basis in rows)
    lines = text.output.splitlines()
    for result_id, basis in rows:
        assert any(f"result {result_id}" in line and basis in line for line in lines), basis


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--model", "no-such-model"], 1, "--model: no result for 'no-such-model'"),
        (["--model", "llama-2-70b-chat", "--tier", "gold"], 1, "--tier: expected one of"),
        (["--model", "llama-2-70b-chat", "--precision", "int3"], 1, "--precision:"),
        (["--model", "llama-2-70b-chat", "--percentile", "0"], 2, "--percentile"),
    ],
)
def test_cli_answer_bad_input_is_one_line(args: list[str], code: int, message: str) -> None:
    result = invoke("registry", "answer", *args, "--no-estimate", "--registry", str(REPO))
    assert result.exit_code == code
    assert message in result.output


@pytest.mark.parametrize(
    ("dataset", "problem"),
    [
        ("sharegpt\x1b]0;pwned\x07", "contains the control character U+001B"),
        ("sharegpt\n  1. 1 × b200: $0.0001/1M", "holds a line break; the field is one line"),
    ],
)
def test_cli_answer_refuses_a_result_string_that_would_retitle_the_terminal(
    tmp_path: Path, dataset: str, problem: str
) -> None:
    # registry answer reads the results as the index does, without `registry validate`: a
    # dataset holding ESC sequences was printed raw in the workload's heading, and one holding
    # a line break started a line of its own (a forged ranking).
    root = empty_registry(tmp_path)
    data = json.loads((REPO / "tests/examples/valid/results/measured-two-points.json").read_text())
    data["identity"]["workload"]["dataset"] = "placeholder"
    path = write_result(with_content_id(parse_result(json.dumps(data), "x.json")), root)
    # Written as a contributor's editor would, past the models that refuse it
    path.write_text(path.read_text().replace('"placeholder"', json.dumps(dataset)))
    args = ("--model", "llama-3.1-8b-instruct", "--slo-ttft-ms", "1000", "--no-estimate")
    result = invoke("registry", "answer", *args, "--registry", str(root))
    assert "\x1b" not in result.output
    assert "\n  1. 1 × b200" not in result.output
    assert result.exit_code == 1
    assert f"{path.relative_to(root)}: identity.workload.dataset: " in result.output
    assert problem in result.output
