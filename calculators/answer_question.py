"""What a buyer's question (`answer.Question`) may name: a model with results, a price tier the
prices hold, and a workload and a weight precision among the model's results. One rule for
`infermeter registry answer` (`registry.answers.check_question`) and the answer page
(`answer_render.parse_question`), each problem keyed by its input's name
(`calculators.inputs.ANSWER`), which each of them names its own way (`--tier`, `tier`).

A catalog model without results may be asked too (`configs`: the catalog's models): its answer
is the estimate alone (`answer.answer`), for a workload of any model's results (by default the
example workload, `EXAMPLE_TOKENS`) at a weight precision the estimate plans (by default the
checkpoint's own, `resolve_catalog_only`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from infermeter.calculators.accepted import Point
from infermeter.calculators.answer import Price, Question
from infermeter.calculators.answer_estimate import (
    QUANTIZATION_BY_PRECISION,
    UNQUANTIZED,
    native_precision,
)

# The example request a model without results is estimated for where the reader names no
# workload: a chat turn of the guide's middle size (said so wherever it is shown).
EXAMPLE_TOKENS = (1000, 1000)


def resolve_workload(points: Iterable[Point], model: str, workload: str | None) -> str | None:
    """A workload as the reader typed it (its key, or its label as the pages show it) → its
    key; one the model's results lack stays as typed (`question_problems` names it). For a
    model without results, among every model's workloads."""
    if workload is None:
        return None
    points = list(points)
    askable = [p for p in points if p.model == model] or points
    for point in askable:
        if workload in (point.workload_key, point.workload):
            return point.workload_key
    return workload


def example_workload(points: Iterable[Point]) -> str | None:
    """The key of the results' workload of `EXAMPLE_TOKENS` (stated lengths); None if none."""
    for point in points:
        if (point.input_tokens, point.output_tokens) == EXAMPLE_TOKENS and point.dataset is None:
            return point.workload_key
    return None


def resolve_catalog_only(
    question: Question, points: Sequence[Point], configs: Mapping[str, Mapping[str, Any]]
) -> Question:
    """The question about a catalog model without results, with what it leaves open filled in:
    the example workload and the checkpoint's own weight precision; any other unchanged."""
    config = configs.get(question.model)
    if config is None or any(p.model == question.model for p in points):
        return question
    return replace(
        question,
        workload_key=question.workload_key or example_workload(points),
        precision=question.precision or native_precision(config),
    )


def question_problems(
    question: Question,
    points: Sequence[Point],
    prices: Iterable[Price],
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, str]:
    """{input name: what is wrong with it} for what the question names that the evidence
    lacks; the workload and precision are checked against a known model's results only, or
    for a catalog model without results (`configs`), against what the estimate plans."""
    problems: dict[str, str] = {}
    models = sorted({p.model for p in points})
    # without results, there is no workload to estimate at
    catalog_only = sorted(set(configs or {}) - set(models)) if models else []
    if question.model not in models and question.model not in catalog_only:
        # a page's model list leaves it blank where the address named a model it lacks
        missing = f"no result for {question.model!r}" if question.model else "required"
        problems["model"] = f"{missing}; models with results: {', '.join(models) or 'none'}" + (
            f"; without (an estimate only): {', '.join(catalog_only)}" if catalog_only else ""
        )
    tiers = sorted({p.tier for p in prices})
    if question.tier not in tiers:
        problems["tier"] = f"expected one of {', '.join(tiers)}, not {question.tier!r}"
    if "model" in problems:
        return problems
    if question.model in catalog_only:
        return problems | _estimate_problems(question, points, (configs or {})[question.model])
    mine = [p for p in points if p.model == question.model]
    # a workload by its key and its label (what a reader recognises), a precision by its name
    workloads = {p.workload_key: f"{p.workload_key} ({p.workload})" for p in mine}
    for name, wanted, known in (
        ("workload", question.workload_key, workloads),
        ("precision", question.precision, {p.precision: p.precision for p in mine}),
    ):
        if wanted is not None and wanted not in known:
            listed = ", ".join(known[key] for key in sorted(known))
            problems[name] = f"{question.model} has no result for {wanted!r}; it has {listed}"
    return problems


def _estimate_problems(
    question: Question, points: Sequence[Point], config: Mapping[str, Any]
) -> dict[str, str]:
    """What a question about a model without results names that no estimate can plan: a
    workload no model's results hold, or a weight precision the estimate does not model."""
    problems: dict[str, str] = {}
    workloads = {p.workload_key: f"{p.workload_key} ({p.workload})" for p in points}
    listed = ", ".join(workloads[key] for key in sorted(workloads))
    if question.workload_key is None:  # no result holds the example workload
        problems["workload"] = f"{question.model} has no result: name one to estimate at: {listed}"
    elif question.workload_key not in workloads:
        problems["workload"] = (
            f"no result has {question.workload_key!r}; an estimate plans one of {listed}"
        )
    precisions = sorted({UNQUANTIZED, native_precision(config), *QUANTIZATION_BY_PRECISION})
    if question.precision is not None and question.precision not in precisions:
        problems["precision"] = (
            f"{question.model} has no result; an estimate plans {', '.join(precisions)}, "
            f"not {question.precision!r}"
        )
    return problems
