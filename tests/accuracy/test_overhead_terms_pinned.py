"""Mutation-proof overhead terms: doubling any one of them (activation peak, sampler, non-torch,
CUDA graphs) must break at least one accuracy figure of the public vLLM logs, and the unpatched
plan must break none. benchmarks/overhead_mutations.py prints the same check."""

import pytest
from mutations import TERMS, broken_by_doubling

from infermeter.registry.plan_accuracy import failures, load_cases

CASES = load_cases()


def test_unpatched_plan_meets_every_logged_figure() -> None:
    assert failures(CASES) == []


@pytest.fixture(scope="module")
def broken() -> dict[str, list[str]]:
    return broken_by_doubling(lambda: failures(CASES))


@pytest.mark.parametrize("term", list(TERMS))
def test_doubling_the_term_breaks_a_logged_figure(term: str, broken: dict[str, list[str]]) -> None:
    assert broken[term], f"doubling {term} leaves every logged figure within tolerance"
