"""A catalog model no result measures is answered by its estimate alone, as its model page
does: `registry answer --model qwen3-8b` said "no result for 'qwen3-8b'" for 33 of the
catalog's 51 models while each one's page showed an estimate per preset, and the answer page
did not list them. The estimate is planned at the example workload (1,000 → 1,000 tokens, a
workload of the registry's results) or the one named, at the checkpoint's own weights or the
precision named."""

from functools import cache

import pytest

from infermeter.calculators.accepted import Slo
from infermeter.calculators.answer import NO_RESULT_LANE, Estimate, Question
from infermeter.calculators.answer_estimate import AnswerEstimator, native_precision
from infermeter.calculators.answer_question import EXAMPLE_TOKENS
from infermeter.registry.answers import answer_estimator, load_evidence
from infermeter.registry.catalog import load_models
from tests.cli_helpers import invoke, json_output
from tests.registry_checkout import REPOSITORY_ROOT as REPO


@cache
def _without_results() -> list[str]:
    measured = {point.model for point in load_evidence(REPO).points}
    without = sorted(set(load_models()) - measured)
    assert without, "every catalog model has a result: these tests would check nothing"
    return without


def _estimator() -> AnswerEstimator:
    return answer_estimator(REPO, load_evidence(REPO))


@pytest.mark.parametrize(
    ("slo", "options"),
    [
        (Slo(), []),
        (Slo(99, ttft_ms=500, tpot_ms=40), ["--slo-ttft-ms", "500", "--slo-tpot-ms", "40"]),
    ],
    ids=["batch", "interactive"],
)
def test_a_model_without_results_gets_its_model_pages_estimate(
    slo: Slo, options: list[str]
) -> None:
    model = _without_results()[0]
    found = json_output("registry", "answer", "--model", model, *options)
    precision = native_precision(load_models()[model].config)
    assert found["question"]["precision"] == precision
    [answer] = found["answers"]
    assert (answer["lane"], answer["group_points"], answer["rows"]) == (NO_RESULT_LANE, 0, [])
    assert answer["workload"] == f"{EXAMPLE_TOKENS[0]:,} → {EXAMPLE_TOKENS[1]:,} tokens"
    # the figure the model page shows for a preset of these bounds (`model_estimates`)
    expected = _estimator().estimate(Question(model, slo), EXAMPLE_TOKENS, precision)
    assert isinstance(expected, Estimate), expected
    estimate = answer["estimate"]
    assert (estimate["gpu"], estimate["gpu_count"], estimate["price_id"]) == (
        expected.gpu,
        expected.gpu_count,
        expected.price_id,
    )
    assert estimate["usd_per_million_output_tokens"] == pytest.approx(
        expected.usd_per_million_output_tokens, rel=1e-6
    )
    text = invoke("registry", "answer", "--model", model, *options).stdout
    assert f"no result measures {model} yet: an estimate only" in text
    assert "estimate, not a measurement (roofline bound" in text or "(prediction" in text


def test_a_model_without_results_at_a_named_workload_and_precision() -> None:
    model = _without_results()[0]
    found = json_output(
        "registry", "answer", "--model", model, "--workload", "5,000 → 500 tokens",
        "--precision", "fp8", "--slo-tpot-ms", "20",
    )  # fmt: skip
    [answer] = found["answers"]
    assert (answer["workload"], answer["precision"]) == ("5,000 → 500 tokens", "fp8")
    question = Question(model, Slo(tpot_ms=20))
    expected = _estimator().estimate(question, (5000, 500), "fp8")
    assert isinstance(expected, Estimate), expected
    assert answer["estimate"]["usd_per_million_output_tokens"] == pytest.approx(
        expected.usd_per_million_output_tokens, rel=1e-6
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--precision", "fp3"], "an estimate plans 16-bit, fp4, fp8, int4, mxfp4, nvfp4"),
        (["--workload", "nope"], "no result has 'nope'; an estimate plans one of "),
    ],
    ids=["precision", "workload"],
)
def test_a_model_without_results_refuses_what_no_estimate_plans(
    options: list[str], message: str
) -> None:
    model = _without_results()[0]
    result = invoke("registry", "answer", "--model", model, *options)
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Error: {options[0]}: "), line
    assert message in line, line


def test_an_unknown_model_lists_the_models_answered_by_an_estimate_too() -> None:
    result = invoke("registry", "answer", "--model", "nope")
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert f"; without (an estimate only): {', '.join(_without_results())}" in line, line


def test_no_estimate_asked_says_so_for_a_model_without_results() -> None:
    model = _without_results()[0]
    text = invoke("registry", "answer", "--model", model, "--no-estimate").stdout
    assert text.splitlines()[-1] == "  no estimate: not asked for (--no-estimate)"
