"""What a buyer's question (`answer.Question`) may name: a model with results, a price tier the
prices hold, and a workload and a weight precision among the model's results. One rule for
`infermeter registry answer` (`registry.answers.check_question`) and the answer page
(`answer_render.parse_question`), each problem keyed by its input's name
(`calculators.inputs.ANSWER`), which each of them names its own way (`--tier`, `tier`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from infermeter.calculators.accepted import Point
from infermeter.calculators.answer import Price, Question


def resolve_workload(points: Iterable[Point], model: str, workload: str | None) -> str | None:
    """A workload as the reader typed it (its key, or its label as the pages show it) → its
    key; one the model's results lack stays as typed (`question_problems` names it)."""
    if workload is None:
        return None
    for point in points:
        if point.model == model and workload in (point.workload_key, point.workload):
            return point.workload_key
    return workload


def question_problems(
    question: Question, points: Sequence[Point], prices: Iterable[Price]
) -> dict[str, str]:
    """{input name: what is wrong with it} for what the question names that the evidence
    lacks; the workload and precision are checked against a known model's results only."""
    problems: dict[str, str] = {}
    models = sorted({p.model for p in points})
    if question.model not in models:
        # a page's model list leaves it blank where the address named a model it lacks
        missing = f"no result for {question.model!r}" if question.model else "required"
        problems["model"] = f"{missing}; models with results: {', '.join(models) or 'none'}"
    tiers = sorted({p.tier for p in prices})
    if question.tier not in tiers:
        problems["tier"] = f"expected one of {', '.join(tiers)}, not {question.tier!r}"
    if "model" in problems:
        return problems
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
