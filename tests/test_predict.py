"""Tests of the performance predictor (`calculators.predict`): its physics' invariants, its
loads, its SLO search, and `infermeter calc perf` (JSON shape, one-line errors)."""

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke, json_output

from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.perf_fit import FITTED
from infermeter.calculators.predict import (
    Deployment,
    Factors,
    Load,
    P99Bounds,
    Workload,
    predict,
    predict_prepared,
    prepare,
)
from infermeter.registry.catalog import load_gpus
from infermeter.registry.lookup import model_arch
from infermeter.registry.perf_cases import gpu_for_prediction

GPUS = load_gpus()


def _deployment(
    model: str = "llama-3.1-8b-instruct", gpu: str = "h100-sxm", **kw: Any
) -> Deployment:
    return Deployment(arch=model_arch(model), gpu=gpu_for_prediction(GPUS[gpu]), **kw)


WORKLOAD = Workload(1000, 500)


def test_predict_throughput_grows_with_concurrency_and_tpot_with_it() -> None:
    figures = [predict(_deployment(), WORKLOAD, Load("concurrency", n)) for n in (1, 8, 64, 256)]
    tokens = [figure.output_tokens_per_s for figure in figures]
    tpots = [figure.tpot_ms["p50"] for figure in figures]
    assert tokens == sorted(tokens)
    assert tokens[0] < tokens[-1] / 10
    assert tpots == sorted(tpots)


def test_predict_offline_is_the_most_a_closed_loop_reaches() -> None:
    offline = predict(_deployment(), WORKLOAD, Load("offline"))
    closed = predict(_deployment(), WORKLOAD, Load("concurrency", 10_000))
    assert offline.output_tokens_per_s == pytest.approx(closed.output_tokens_per_s)
    assert closed.saturated
    assert not offline.saturated


def test_predict_faster_memory_decodes_faster_at_batch_one() -> None:
    h100 = predict(_deployment(), WORKLOAD, Load("static_batch", 1))
    h200 = predict(_deployment(gpu="h200-sxm"), WORKLOAD, Load("static_batch", 1))
    ratio = GPUS["h200-sxm"].memory_bandwidth_gb_s / GPUS["h100-sxm"].memory_bandwidth_gb_s
    # the engine's fitted overhead per step is the same on both; the rest is memory reads
    overhead = FITTED.step_overhead_ms
    assert overhead < h200.tpot_ms["p50"] / 2  # most of the step is still memory
    memory_bound = (h100.tpot_ms["p50"] - overhead) / (h200.tpot_ms["p50"] - overhead)
    assert memory_bound == pytest.approx(ratio, rel=0.05)


@pytest.mark.parametrize("name", ["memory", "compute", "generation", "engine"])
def test_predict_a_doubled_efficiency_never_slows_and_doubling_all_doubles(name: str) -> None:
    base = Factors(memory=0.5, compute=0.4)
    doubled = {
        "memory": replace(base, memory=1.0),
        "compute": replace(base, compute=0.8),
        "generation": replace(base, generation={"Hopper": 2.0}),
        "engine": replace(base, engine={"vllm": 2.0}),
    }[name]
    prepared = prepare(_deployment(), WORKLOAD)
    before = predict_prepared(prepared, Load("offline"), base).output_tokens_per_s
    after = predict_prepared(prepared, Load("offline"), doubled).output_tokens_per_s
    assert after > before
    if name in ("generation", "engine"):  # every time divides by it: exactly twice as fast
        assert after == pytest.approx(2 * before)


def test_predict_ttft_p99_grows_toward_saturation() -> None:
    most = predict(_deployment(), WORKLOAD, Load("offline")).requests_per_s
    light = predict(_deployment(), WORKLOAD, Load("request_rate", most * 0.1))
    heavy = predict(_deployment(), WORKLOAD, Load("request_rate", most * 0.95))
    over = predict(_deployment(), WORKLOAD, Load("request_rate", most * 1.5))
    assert light.ttft_ms["p99"] is not None
    assert heavy.ttft_ms["p99"] is not None
    assert heavy.ttft_ms["p99"] > 3 * light.ttft_ms["p99"]
    assert over.saturated
    assert over.ttft_ms["p99"] is None
    assert light.output_tokens_per_s == pytest.approx(most * 0.1 * WORKLOAD.output_tokens)


@pytest.mark.parametrize("share", [0.5, 0.01, 1e-6])
def test_predict_open_loop_below_one_request_in_flight_serves_the_rate_asked(share: float) -> None:
    # A rate under one request in flight (each runs alone) was predicted at one request in
    # flight's throughput: at 0.01 req/s, 0.56 req/s and 111 output tokens/s.
    alone = predict(_deployment(), WORKLOAD, Load("static_batch", 1))
    rate = share * alone.requests_per_s
    light = predict(_deployment(), WORKLOAD, Load("request_rate", rate))
    assert light.requests_per_s == pytest.approx(rate)
    assert light.output_tokens_per_s == pytest.approx(rate * WORKLOAD.output_tokens)
    assert light.tpot_ms["p50"] == pytest.approx(alone.tpot_ms["p50"])


def test_predict_static_batch_beyond_the_engine_batch_waits_its_rounds() -> None:
    # Ten times the engine's largest batch runs in ten rounds: its TTFT p99 was the first
    # round's (13 s for 100,000 requests on an H100, where the last wait over an hour).
    most = predict(_deployment(), WORKLOAD, Load("offline")).max_batch_per_replica
    one_round = predict(_deployment(), WORKLOAD, Load("static_batch", most))
    rounds = predict(_deployment(), WORKLOAD, Load("static_batch", 10 * most))
    e2e, first = one_round.e2e_ms_p50 or 0.0, one_round.ttft_ms["p99"] or 0.0
    assert one_round.ttft_ms["p50"] == first
    assert rounds.ttft_ms["p99"] == pytest.approx(9 * e2e + first)
    assert rounds.ttft_ms["p50"] == pytest.approx(4 * e2e + first)


def test_predict_max_rate_meets_its_slo_and_a_higher_rate_does_not() -> None:
    slo = P99Bounds(ttft_ms=500, tpot_ms=30)
    found = predict(_deployment(), WORKLOAD, Load("offline"), slo=slo).max_request_rate_at_slo
    assert found is not None
    assert found > 0
    at = predict(_deployment(), WORKLOAD, Load("request_rate", found * 0.999), slo=slo)
    above = predict(_deployment(), WORKLOAD, Load("request_rate", found * 1.1), slo=slo)
    assert at.usd_per_million_accepted_tokens is None  # no price given
    assert (at.ttft_ms["p99"] or math.inf) <= 500
    assert at.tpot_ms["p99"] <= 30
    assert (above.ttft_ms["p99"] or math.inf) > 500 or above.tpot_ms["p99"] > 30


def test_predict_cost_follows_the_price_and_the_throughput() -> None:
    figure = predict(_deployment(), WORKLOAD, Load("offline"), price_usd_per_gpu_hour=2.0)
    expected = 2.0 / (figure.output_tokens_per_s * 3600) * 1e6
    assert figure.usd_per_million_output_tokens == pytest.approx(expected)


def test_predict_a_model_that_does_not_fit_says_so() -> None:
    with pytest.raises(CalculatorError, match="does not fit"):
        predict(_deployment("llama-3.1-405b-instruct", "l40s"), WORKLOAD, Load("offline"))


def test_predict_uses_the_published_factors_by_default() -> None:
    figure = predict(_deployment(), WORKLOAD, Load("offline"))
    assert figure.factors["memory"] == FITTED.memory
    assert figure.factors["generation:Hopper"] == FITTED.generation.get("Hopper", 1.0)


PERF_KEYS = {"output_tokens_per_s", "ttft_ms", "tpot_ms", "error_label", "shown", "kind"}


@pytest.mark.parametrize(
    "load",
    [["--concurrency", "16"], ["--request-rate", "2"], ["--offline"], ["--static-batch", "4"]],
)
def test_calc_perf_json_has_the_figures_and_their_error(load: list[str]) -> None:
    payload = json_output(
        "calc",
        "perf",
        "--model",
        "llama-3.1-70b-instruct",
        "--gpu",
        "h100-sxm",
        "-tp",
        "4",
        "--quantization",
        "fp8",
        "--kv-cache-dtype",
        "fp8",
        "--input-len",
        "1000",
        "--output-len",
        "1000",
        *load,
    )
    assert payload.keys() >= PERF_KEYS
    assert set(payload["ttft_ms"]) == {"p50", "p99"}
    assert set(payload["tpot_ms"]) == {"p50", "p99"}
    assert payload["output_tokens_per_s"] > 0
    assert payload["gpu_count"] == 4
    assert payload["error_label"].startswith("predicted: ")


def test_calc_perf_takes_a_named_dataset() -> None:
    payload = json_output(
        "calc",
        "perf",
        "--model",
        "llama-2-70b-chat",
        "--gpu",
        "h200-sxm",
        "--quantization",
        "fp8",
        "--dataset",
        "mlperf-llama2-70b",
        "--offline",
    )
    assert payload["workload"]["output_tokens"] == 294.45  # the reference's tokens per sample


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input-len", "100", "--output-len", "100"], "exactly one of"),
        (
            ["--input-len", "100", "--output-len", "100", "--offline", "--concurrency", "3"],
            "exactly one of",
        ),
        (["--offline"], "input_len"),
        (
            ["--input-len", "100", "--output-len", "100", "--offline", "--gpu", "h100"],
            "unknown GPU",
        ),
    ],
)
def test_calc_perf_bad_input_is_one_line(args: list[str], message: str) -> None:
    base = ["calc", "perf", "--model", "llama-3.1-8b-instruct"]
    if "--gpu" not in args:
        base += ["--gpu", "h100-sxm"]
    result = invoke(*base, *args)
    assert result.exit_code in (1, 2), result.output
    lines = [line for line in result.output.strip().splitlines() if line]
    assert len(lines) == 1, result.output
    assert message in lines[0], result.output


# The figure the perf page shows is what `--from-perf` costs: the prediction of a kind that met
# its error target (a static batch's), else the roofline bound (offline, a concurrency), and the
# label says which. Before, a concurrency's prediction was costed as "predicted" though the page
# showed only its bound, and the page had no way on to the cost calculator at all. (A static
# batch's error is measured on mi300x only: on h100-sxm its bound is shown.)
@pytest.mark.parametrize(
    ("gpu", "load", "basis", "figure"),
    [
        ("mi300x", ["--static-batch", "8"], "predicted-latency", "output_tokens_per_s"),
        ("h100-sxm", ["--static-batch", "8"], "bound", "roofline_bound_tokens_per_s"),
        ("h100-sxm", ["--offline", "-dp", "2"], "bound", "roofline_bound_tokens_per_s"),
        ("h100-sxm", ["--concurrency", "16"], "bound", "roofline_bound_tokens_per_s"),
    ],
)
def test_calc_cost_takes_the_figure_shown_labelled(
    tmp_path: Path, gpu: str, load: list[str], basis: str, figure: str
) -> None:
    perf = json_output("calc", "perf", "--model", "llama-3.1-8b-instruct", "--gpu", gpu,
                       "--input-len", "2000", "--output-len", "200", *load)  # fmt: skip
    saved = tmp_path / "perf.json"
    saved.write_text(json.dumps(perf))
    cost = json_output("calc", "cost", "--from-perf", str(saved))
    assert cost["tokens_per_second_basis"]["basis"] == basis
    label = cost["tokens_per_second_basis"]["label"]
    if basis == "bound":
        assert cost["tokens_per_second_basis"]["kind"] == "bound"
        assert "roofline bound: no run can beat it" in label
    else:
        assert cost["tokens_per_second_basis"]["kind"] == "predicted"
        assert label == perf["error_label"]
    assert cost["gpu"] == gpu
    assert cost["tokens_per_second"] == perf[figure]
    price = cost["prices"]["price_per_hour"]["usd_per_gpu_hour"]
    expected = price * perf["gpu_count"] / (perf[figure] * 3600) * 1e6
    assert cost["usd_per_million_tokens"] == pytest.approx(expected)
    table = invoke("calc", "cost", "--from-perf", str(saved))
    assert table.exit_code == 0, table.output
    assert f"from the perf calculator: {label}" in table.output
    by_hand = json_output("calc", "cost", "--gpu", gpu, "--gpu-count",
                          str(perf["gpu_count"]), "--tokens-per-second", repr(perf[figure]),
                          "--tokens-per-second-basis", basis)  # fmt: skip
    assert by_hand == cost


def test_calc_cost_typed_by_hand_says_nothing_of_the_perf_calculator() -> None:
    cost = json_output("calc", "cost", "--gpu", "h100-sxm", "--tokens-per-second", "2800")
    assert cost["tokens_per_second_basis"] == {"kind": "given"}
    table = invoke("calc", "cost", "--gpu", "h100-sxm", "--tokens-per-second", "2800")
    assert "perf calculator" not in table.output


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--tokens-per-second", "100", "--tokens-per-second-basis", "<script>x</script>"],
         "--tokens-per-second-basis"),
        (["--tokens-per-second", "100", "--tokens-per-second-basis", "predicted-\x1b"],
         "--tokens-per-second-basis"),
    ],
)  # fmt: skip
def test_calc_cost_tampered_basis_is_refused_in_one_line(args: list[str], named: str) -> None:
    result = invoke("calc", "cost", "--gpu", "h100-sxm", *args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.strip().splitlines() if line]
    assert len(lines) == 1, result.output
    assert named in lines[0], result.output


def test_calc_cost_from_perf_carries_its_own_basis(tmp_path: Path) -> None:
    perf = json_output("calc", "perf", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
                       "--input-len", "2000", "--output-len", "200",
                       "--concurrency", "16")  # fmt: skip
    saved = tmp_path / "perf.json"
    saved.write_text(json.dumps({**perf, "shown": "prediction\nforged"}))
    result = invoke("calc", "cost", "--from-perf", str(saved))
    assert result.exit_code == 1, result.output
    assert "--from-perf: shown: expected prediction or bound" in result.output
    saved.write_text(json.dumps(perf))
    result = invoke("calc", "cost", "--from-perf", str(saved), "--tokens-per-second-basis", "bound")
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize(
    ("text", "args", "code"),
    [
        ('{"gpu": "h100-sxm"}', [], 1),
        ("not json", [], 1),
        ("[" * 100_000 + "]" * 100_000, [], 1),  # a RecursionError's traceback before
        ('{"gpu_count": ' + "9" * 5_000 + "}", [], 1),  # a ValueError's traceback before
        ("{}", ["--tokens-per-second", "100"], 2),
    ],
)
def test_calc_cost_from_perf_bad_input_is_one_line(
    tmp_path: Path, text: str, args: list[str], code: int
) -> None:
    saved = tmp_path / "perf.json"
    saved.write_text(text)
    result = invoke("calc", "cost", "--from-perf", str(saved), *args)
    assert result.exit_code == code, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--gpu", "a100-80gb-sxm"], "--gpu a100-80gb-sxm"),
        (["--gpu-count", "2"], "--gpu-count 2"),
        (["--gpu-count", "1"], "--gpu-count 1"),
    ],
)
def test_calc_cost_from_perf_refuses_another_gpu_or_count(
    tmp_path: Path, extra: list[str], named: str
) -> None:
    # 8 x H100's roofline bound, 29,090 tok/s, was costed at an A100's $4.00/GPU-hour with
    # --gpu a100-80gb-sxm ($0.3056/1M, 'a floor'), and as 2 GPUs' with --gpu-count 2 (a quarter
    # of its cost); an explicit --gpu-count 1 was taken as 8.
    perf = json_output("calc", "perf", "--model", "llama-3.1-70b-instruct", "--gpu", "h100-sxm",
                       "-tp", "8", "--offline", "--input-len", "1000",
                       "--output-len", "1000")  # fmt: skip
    saved = tmp_path / "perf.json"
    saved.write_text(json.dumps(perf))
    result = invoke("calc", "cost", "--from-perf", str(saved), *extra)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(
        f"Error: {named}: the --from-perf throughput is of 8 × h100-sxm; leave it out"
    ), result.stderr
    same = ["--gpu", "h100-sxm", "--gpu-count", "8"]
    assert invoke("calc", "cost", "--from-perf", str(saved), *same).exit_code == 0
