"""The buyer's answers from a registry checkout: its results and prices as evidence
(`registry.evidence`), ranked by the one piece of code that computes answers
(`calculators.answer`), for the CLI (`infermeter registry answer`) and the site (`answers.json`,
the answer page, Home).

Where nothing qualifies, the estimate beside the answer is at the question's own weight
precision, from `calculators.answer_estimate.AnswerEstimator` (the predictor's figure with its
measured error where the question's kind met its target, else the roofline bound naming the
target missed): the one estimate path of the CLI, the site build and the browser.
"""

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.calculators.accepted import Point, Slo
from infermeter.calculators.answer import (
    NO_RESULT_LANE,
    PRESETS,
    Answer,
    Estimate,
    Estimator,
    NoEstimate,
    Preset,
    Price,
    Question,
    answer,
    estimate_phrase,
    miss_heading,
    no_result_heading,
)
from infermeter.calculators.answer_estimate import (
    AnswerEstimator,
    EstimateGpu,
    WorkloadTokens,
    workload_tokens_of,
)
from infermeter.calculators.answer_question import (
    question_problems,
    resolve_catalog_only,
    resolve_workload,
)
from infermeter.calculators.inputs import ANSWER
from infermeter.calculators.perf_fit import HELD_OUT
from infermeter.calculators.perf_labels import HeldOut
from infermeter.registry.catalog import load_gpus, load_models, load_prices
from infermeter.registry.checks.physics import gpu_memory_bytes
from infermeter.registry.corrections import CORRECTIONS_FILE, latest_entries, load_corrections
from infermeter.registry.errors import RegistryError
from infermeter.registry.evidence import answer_prices, current, point_evidence
from infermeter.registry.location import catalogs_folder
from infermeter.registry.models import GpuEntry, ModelEntry
from infermeter.registry.perf_cases import gpu_for_prediction
from infermeter.registry.result_reader import load_results, result_files

ANSWERS_SCHEMA_VERSION = 1
ANSWER_OPTIONS = {field.name: field.option for field in ANSWER}  # `registry answer`'s options


class AnswerInputError(RegistryError):
    """A question the registry cannot be asked (an unknown model, tier or precision)."""


@dataclass(frozen=True)
class Evidence:
    """What answers are computed from: every current point and the prices figures use."""

    points: list[Point]
    prices: list[Price]


def evidence_of(results: Iterable[Any], corrections: Mapping[str, Any]) -> list[Point]:
    """Every current point of `results` as evidence, in file order."""
    return [
        point_evidence(result, index)
        for result in results
        for index, point in enumerate(result.points)
        if current(point, corrections.get(result.id))
    ]


def load_evidence(root: Path) -> Evidence:
    """The evidence of the registry checkout at `root`."""
    results = [result for _file, result in load_results(root, result_files(root))]
    corrections = latest_entries(load_corrections(root / CORRECTIONS_FILE))
    prices = load_prices(catalogs_folder(root)).values()
    return Evidence(evidence_of(results, corrections), answer_prices(prices))


# --- estimates ----------------------------------------------------------------------------


def catalog_estimator(
    gpus: Mapping[str, GpuEntry],
    models: Mapping[str, ModelEntry],
    prices: Sequence[Price],
    tokens: Mapping[tuple[str, str], WorkloadTokens],
    held_out: HeldOut = HELD_OUT,
) -> AnswerEstimator:
    """The estimator (`calculators.answer_estimate`) over catalog entries: each GPU as the
    predictor reads it, each model's config."""
    return AnswerEstimator(
        {model_id: model.config for model_id, model in models.items()},
        {
            gpu_id: EstimateGpu(gpu_for_prediction(gpu), int(gpu_memory_bytes(gpu)))
            for gpu_id, gpu in gpus.items()
        },
        prices,
        tokens,
        held_out,
    )


def every_estimate(
    evidence: Evidence, estimator: AnswerEstimator
) -> dict[tuple[str, str, str, str, str], Estimate | NoEstimate]:
    """(model, workload key, precision, tier, kind) → the estimate (or why there is none), for
    every evidence group and every price tier the evidence's prices offer, for the batch
    question (kind `offline`): the one kind whose estimate is the same at every SLO
    (`AnswerEstimator.slo_independent`), what the browser shows where nothing qualifies. The
    browser works out the others at the reader's SLO."""
    tiers = sorted({p.tier for p in evidence.prices})
    estimates: dict[tuple[str, str, str, str, str], Estimate | NoEstimate] = {}
    if not estimator.slo_independent("offline"):
        return estimates
    for model, workload_key, precision in sorted(
        {(p.model, p.workload_key, p.precision) for p in evidence.points}
    ):
        for tier in tiers:
            found = estimator(Question(model, Slo(), tier), workload_key, precision)
            if found is not None:
                estimates[(model, workload_key, precision, tier, "offline")] = found
    return estimates


def answer_estimator(
    root: Path, evidence: Evidence, held_out: HeldOut = HELD_OUT
) -> AnswerEstimator:
    """The estimator of the registry checkout at `root` (`catalog_estimator`)."""
    catalogs = catalogs_folder(root)
    return catalog_estimator(
        load_gpus(catalogs),
        load_models(catalogs),
        evidence.prices,
        workload_tokens_of(evidence.points),
        held_out,
    )


# --- questions ------------------------------------------------------------------------------


def check_question(
    question: Question, evidence: Evidence, configs: Mapping[str, Mapping[str, Any]] | None = None
) -> None:
    """Raise AnswerInputError naming the option when the registry holds nothing to ask
    (`question_problems`, the answer page's rule too; `configs`: the catalog's models, each
    of which may be asked for its estimate)."""
    problems = question_problems(question, evidence.points, evidence.prices, configs)
    if problems:
        name, reason = next(iter(problems.items()))
        raise AnswerInputError(f"{ANSWER_OPTIONS[name]}: {reason}")


def ask(
    evidence: Evidence,
    question: Question,
    estimator: Estimator | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Answer]:
    """The answers to a question the registry can be asked (`check_question` first)."""
    check_question(question, evidence, configs)
    return answer(evidence.points, evidence.prices, question, estimator)


def preset_answers(
    evidence: Evidence, preset: Preset, estimator: Estimator | None = None, tier: str = "on_demand"
) -> list[Answer]:
    """A preset's answers for every model with evidence, over the workloads it asks about."""
    points = [p for p in evidence.points if preset.fits(p)]
    answers = []
    for model in sorted({p.model for p in points}):
        answers += answer(points, evidence.prices, Question(model, preset.slo, tier), estimator)
    return answers


def site_answers(evidence: Evidence, estimator: Estimator | None = None) -> dict[str, list[Answer]]:
    """Every preset's answers (preset id → answers): what the site shows and answers.json holds."""
    return {preset.id: preset_answers(evidence, preset, estimator) for preset in PRESETS}


def answers_document(answers: Mapping[str, list[Answer]]) -> dict[str, Any]:
    """answers.json's data: each preset's SLO and answers."""
    presets = {preset.id: preset for preset in PRESETS}
    return {
        "schema_version": ANSWERS_SCHEMA_VERSION,
        "presets": [
            {
                "id": preset_id,
                "title": presets[preset_id].title,
                "slo": presets[preset_id].slo.as_dict(),
                "min_input_tokens": presets[preset_id].min_input_tokens,
                "why": presets[preset_id].why,
                "answers": [a.as_dict() | {"preset": preset_id} for a in found],
            }
            for preset_id, found in answers.items()
        ],
    }


def answers_json(answers: Mapping[str, list[Answer]]) -> str:
    """answers.json's text: deterministic, indented, one trailing newline."""
    return json.dumps(answers_document(answers), indent=2, ensure_ascii=False) + "\n"


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:,.4f}"


def _answer_head(found: Answer) -> str:
    kind = (
        no_result_heading(found)
        if found.lane == NO_RESULT_LANE
        else f"{found.scenario} · {found.lane} lane"
    )
    return f"{found.workload} · {found.precision} · {kind} (workload {found.workload_key})"


def _row_line(place: int, row: Any) -> str:
    point, price = row.point, row.price
    price_text = (
        "no price"
        if price is None
        else f"{price.provider} {price.tier} ${price.usd_per_gpu_hour:,.2f}/GPU-h, "
        f"{price.as_of}, confidence {price.confidence or 'not stated'}"
        + (f", {row.market_text}" if row.market_text else "")
    )
    ratio = "" if row.ratio_to_winner is None else f" ×{row.ratio_to_winner:.2f}"
    mlperf = f", MLPerf {point.mlperf_result_id}" if point.mlperf_result_id else ""
    return (
        f"  {place}. {point.gpu_count} × {point.gpu}: {_usd(row.usd_per_million_accepted)}/1M "
        f"accepted{ratio} ({row.acceptance.accepted_tokens_per_s:,.0f} tok/s; {price_text}; "
        f"result {point.result_id}{mlperf}; {point.load}: {row.acceptance.basis})"
    )


def answer_question(
    root: Path,
    model: str,
    slo: Slo,
    tier: str,
    workload: str | None = None,
    precision: str | None = None,
    estimate: bool = True,
) -> tuple[Question, list[Answer]]:
    """The question a reader asks of the registry at `root` (a workload by key or label), and
    its answers; with `estimate`, the estimate (`AnswerEstimator`) beside what nothing qualifies
    for."""
    evidence = load_evidence(root)
    key = resolve_workload(evidence.points, model, workload)
    configs = {m: entry.config for m, entry in load_models(catalogs_folder(root)).items()}
    question = resolve_catalog_only(
        Question(model, slo, tier, key, precision), evidence.points, configs
    )
    estimator = answer_estimator(root, evidence) if estimate else None
    return question, ask(evidence, question, estimator, configs)


def answers_payload(question: Question, answers: Sequence[Answer]) -> dict[str, Any]:
    """The question and its answers as one JSON object (`registry answer --json`)."""
    return {
        "question": {
            "model": question.model,
            "workload_key": question.workload_key,
            "precision": question.precision,
            "slo": question.slo.as_dict(),
            "tier": question.tier,
        },
        "answers": [found.as_dict() for found in answers],
    }


def answer_text(answers: Sequence[Answer]) -> str:
    """The answers for a terminal: each ranking in full, then one line per miss."""
    if not answers:
        return "no result for this question"
    slo = answers[0].question.slo
    lines = [f"SLO: {slo.text()}; tier {answers[0].question.tier}"]
    for found in answers:
        lines.append(_answer_head(found))
        ranked = list(found.rows) + list(found.unpriced)
        lines += [_row_line(place, row) for place, row in enumerate(ranked, 1)]
        if found.break_even_usd_per_gpu_hour is not None:
            lines.append(
                "  the winner's price is low-confidence: above "
                f"${found.break_even_usd_per_gpu_hour:,.2f}/GPU-h the runner-up wins"
            )
        if found.nearest_miss is not None:
            point, miss = found.nearest_miss
            figures = (
                ""
                if miss.measured_ms is None
                else f": {miss.measured_ms:,.0f} ms against {miss.bound_ms:,.0f} ms"
            )
            lines.append(
                f"  no point meets this; {miss_heading(found)}"
                f"{' ' if found.miss_measured else ': '}{point.gpu_count} × {point.gpu} "
                f"({point.load}): {miss.reason}{figures}"
            )
        if found.estimate is not None:
            estimate = found.estimate
            lines.append(
                f"  estimate, not a measurement ({estimate.kind}, {estimate.precision}): "
                f"{estimate_phrase(estimate)} "
                f"{_usd(estimate.usd_per_million_output_tokens)}/1M output on "
                f"{estimate.gpu_count} × {estimate.gpu} at ${estimate.usd_per_gpu_hour:,.2f}/GPU-h "
                f"({estimate.tier} price {estimate.price_id}): {estimate.full_note}"
            )
        if found.no_estimate is not None:
            lines.append(f"  no estimate: {found.no_estimate}")
        elif found.estimate is None and found.lane == NO_RESULT_LANE:
            lines.append("  no estimate: not asked for (--no-estimate)")
    return "\n".join(lines)
