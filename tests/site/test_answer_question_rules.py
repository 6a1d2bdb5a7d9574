"""The answer question is read by one set of rules (`calculators.inputs.ANSWER`): `infermeter
registry answer` and the answer page (`answer_render.parse_question`, the code the browser runs)
give the same verdict and the same message for the same inputs: a number out of its declared
range, and a model, tier, workload or precision the evidence lacks (`question_problems`). One
table of cases runs through both."""

import json

import pytest
from answer_render import parse_question
from site_helpers import answer_page_data

from infermeter.calculators.inputs import ANSWER
from tests.cli_helpers import invoke

MODEL = "llama-3.1-8b-instruct"
FIELDS = {field.name: field for field in ANSWER}
# (the page's query less the model, the field refused or None where the question stands)
CASES = [
    ({}, None),
    ({"percentile": "95", "ttft_ms": "1000"}, None),
    ({"percentile": "0.5", "ttft_ms": "1000"}, None),
    ({"percentile": "100", "tpot_ms": "40"}, None),
    ({"percentile": "", "ttft_ms": "1000"}, None),  # blank: the default, p99
    ({"percentile": "150"}, "percentile"),
    ({"percentile": "0"}, "percentile"),
    ({"percentile": "-1"}, "percentile"),
    ({"percentile": "p99"}, "percentile"),
    ({"percentile": "nan"}, "percentile"),
    ({"ttft_ms": ""}, None),  # blank: no bound
    ({"ttft_ms": "1e9"}, None),  # the largest bound
    ({"ttft_ms": "1000000001"}, "ttft_ms"),
    ({"ttft_ms": "1e308"}, "ttft_ms"),
    ({"ttft_ms": "inf"}, "ttft_ms"),
    ({"tpot_ms": "0"}, "tpot_ms"),
    ({"tpot_ms": "-40"}, "tpot_ms"),
    ({"tpot_ms": "40 ms"}, "tpot_ms"),
    ({"e2e_ms": "60000"}, None),
    ({"e2e_ms": "2e9"}, "e2e_ms"),
    ({"tier": "reserved", "e2e_ms": "60000"}, None),
    ({"tier": "spot"}, "tier"),
    ({"model": "no-such-model"}, "model"),
    ({"model": ""}, "model"),  # the page's model list blank: the address named one it lacks
    ({"precision": "fp3"}, "precision"),
    ({"precision": "fp8", "workload": "00f02afc10"}, None),
    ({"workload": "no-such-workload"}, "workload"),
    ({"workload": "2,048 → 2,048 tokens", "ttft_ms": "1000"}, None),  # a label the pages show
    # a catalog model without results: its estimate, at a workload of any model's results
    ({"model": "qwen3-8b"}, None),
    ({"model": "qwen3-8b", "workload": "5,000 → 500 tokens", "precision": "fp8"}, None),
    ({"model": "qwen3-8b", "precision": "fp3"}, "precision"),
    ({"model": "qwen3-8b", "workload": "nope"}, "workload"),
]


def _cli_args(query: dict[str, str]) -> list[str]:
    args = ["registry", "answer", "--no-estimate", "--json"]
    for name, value in query.items():
        args += [FIELDS[name].option, value]
    return args


@pytest.mark.parametrize(("given", "refused"), CASES, ids=[str(case[0]) for case in CASES])
def test_answer_question_cli_and_page_give_one_verdict(
    given: dict[str, str], refused: str | None
) -> None:
    query = {"model": MODEL} | given
    page = parse_question(query, answer_page_data())
    result = invoke(*_cli_args(query))
    if refused is None:
        assert not isinstance(page, dict), page
        assert result.exit_code == 0, result.output
        asked = json.loads(result.stdout)["question"]
        assert asked["slo"] == page.slo.as_dict()
        assert (asked["tier"], asked["precision"]) == (page.tier, page.precision)
        assert asked["workload_key"] == page.workload_key
        return
    assert isinstance(page, dict)
    assert list(page) == [refused]
    line = result.stderr.strip()
    assert line.count("\n") == 0, line
    # a range is usage (2), a name the evidence lacks a bad input (1); one message either way
    assert result.exit_code == (2 if FIELDS[refused].kind in ("percentile", "ms") else 1)
    reason = page[refused].split(": ", 1)[1]
    assert f"{FIELDS[refused].option}': {reason}" in line or (
        f"{FIELDS[refused].option}: {reason[:100]}" in line  # a long list is cut
    ), (line, reason)


def test_a_blank_model_is_asked_for_not_quoted_as_empty() -> None:
    # the page's model list is blank where its address names a model without results
    page = parse_question({"model": ""}, answer_page_data())
    assert isinstance(page, dict)
    assert page["model"].startswith("model: required; models with results: deepseek-r1, ")


def test_an_unknown_workload_lists_the_models_workloads_by_label_too() -> None:
    # the list named keys only ("it has 00f02afc10, 1bfd7bbb24, …"), which no page shows alone
    page = parse_question({"model": MODEL, "workload": "nope"}, answer_page_data())
    assert isinstance(page, dict)
    assert "; it has 00f02afc10 (2,048 → 2,048 tokens), " in page["workload"]
