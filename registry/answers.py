"""The buyer's answers from a registry checkout: its results and prices as evidence
(`registry.evidence`), ranked by the one piece of code that computes answers
(`calculators.answer`), for the CLI (`infermeter registry answer`) and the site (`answers.json`,
the answer page, Home).

Where nothing qualifies, the estimate beside the answer is at the question's own weight
precision (`AnswerEstimator`): the fitted predictor's figure (issue 25) with its measured error
where the question's kind of figure met its error target on every held-out split, else the
roofline bound (`RooflineEstimator`), labelled as a bound that no run can beat and naming the
target the prediction missed.
"""

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from infermeter.calculators.accepted import Point, Slo
from infermeter.calculators.answer import (
    PREDICTION,
    PRESETS,
    ROOFLINE_BOUND,
    Answer,
    Estimate,
    Estimator,
    Preset,
    Price,
    Question,
    answer,
    cheapest_price,
    estimate_kind,
    estimate_phrase,
)
from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.fit import GPU_COUNTS, GpuOption, fit_gpu
from infermeter.calculators.perf_fit import HELD_OUT
from infermeter.calculators.perf_labels import HeldOut, error_label, missed_target
from infermeter.calculators.predict import Slo as PredictorSlo
from infermeter.calculators.quantization import weight_bytes, weight_format
from infermeter.calculators.token_cost import usd_per_million_tokens
from infermeter.calculators.vllm_settings import VllmSettings
from infermeter.registry.catalog import load_gpus, load_models, load_prices
from infermeter.registry.checks.physics import gpu_memory_bytes
from infermeter.registry.corrections import CORRECTIONS_FILE, latest_entries, load_corrections
from infermeter.registry.errors import RegistryError
from infermeter.registry.estimate import bound_at_plan
from infermeter.registry.evidence import UNQUANTIZED, answer_prices, current, point_evidence
from infermeter.registry.models import GpuEntry, ModelEntry
from infermeter.registry.perf_cases import QUANTIZATION_BY_PRECISION
from infermeter.registry.prediction import predicted_tokens_per_s
from infermeter.registry.result_reader import load_results, result_files

ANSWERS_SCHEMA_VERSION = 1


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
    prices = load_prices(root / "registry" / "catalogs" / "prices.yaml").values()
    return Evidence(evidence_of(results, corrections), answer_prices(prices))


# --- estimates ----------------------------------------------------------------------------

_QUANTIZATION_OF = {UNQUANTIZED: "none", "nvfp4": "fp4"}


@dataclass(frozen=True)
class _Bound:
    """One deployment's roofline bound, whatever it costs: priced per tier afterwards."""

    gpu: str
    gpu_count: int
    tokens_per_s: float
    note: str


class RooflineEstimator:
    """Per question, the cheapest roofline bound over the catalog's GPUs and GPU counts at the
    question's weight precision and price tier: what no run can beat, so a real token costs
    more. The physics of a deployment is worked out once and priced for every tier."""

    def __init__(
        self,
        gpus: Mapping[str, GpuEntry],
        models: Mapping[str, ModelEntry],
        prices: Sequence[Price],
        tokens: Mapping[tuple[str, str], tuple[int, int]],
    ) -> None:
        self.gpus, self.models, self.prices, self.tokens = gpus, models, prices, tokens
        self._priced = {p.gpu for p in prices}
        self._bounds: dict[tuple[str, str, int, int], list[_Bound]] = {}
        self._memo: dict[tuple[str, str, str, str], Estimate | None] = {}

    def __call__(self, question: Question, workload_key: str, precision: str) -> Estimate | None:
        key = (question.model, workload_key, precision, question.tier)
        if key not in self._memo:
            tokens = self.tokens.get((question.model, workload_key))
            model = self.models.get(question.model)
            self._memo[key] = (
                None
                if tokens is None or model is None
                else self._cheapest(model, precision, question.tier, *tokens)
            )
        return self._memo[key]

    def _cheapest(
        self, model: ModelEntry, precision: str, tier: str, input_tokens: int, output_tokens: int
    ) -> Estimate | None:
        best: Estimate | None = None
        for bound in self.bounds(model, precision, input_tokens, output_tokens):
            price = cheapest_price(self.prices, bound.gpu, tier)
            if price is None:
                continue
            usd = usd_per_million_tokens(
                price.usd_per_gpu_hour * bound.gpu_count, bound.tokens_per_s
            )
            if best is None or usd < best.usd_per_million_output_tokens:
                best = Estimate(
                    gpu=bound.gpu,
                    gpu_count=bound.gpu_count,
                    precision=precision,
                    kind=ROOFLINE_BOUND,
                    output_tokens_per_s=bound.tokens_per_s,
                    usd_per_million_output_tokens=usd,
                    price_id=price.id,
                    note=bound.note,
                    tier=tier,
                    usd_per_gpu_hour=price.usd_per_gpu_hour,
                )
        return best

    def bounds(
        self, model: ModelEntry, precision: str, input_tokens: int, output_tokens: int
    ) -> list[_Bound]:
        """Every priced GPU's bound at every count whose vLLM memory plan fits, worked out once."""
        key = (model.id, precision, input_tokens, output_tokens)
        if key not in self._bounds:
            quantization = _QUANTIZATION_OF.get(precision, precision)
            try:
                arch = parse_config(model.config)
                weights = weight_bytes(arch, weight_format(arch, quantization, None)).total
            except CalculatorError:
                self._bounds[key] = []
                return []
            self._bounds[key] = [
                bound
                for gpu in self.gpus.values()
                if gpu.id in self._priced
                for bound in _gpu_bounds(
                    arch, quantization, gpu, weights, input_tokens, output_tokens
                )
            ]
        return self._bounds[key]


def _gpu_bounds(
    arch: Any,
    quantization: str,
    gpu: GpuEntry,
    weights: float,
    input_tokens: int,
    output_tokens: int,
) -> Iterable[_Bound]:
    """The roofline bound of each GPU count whose vLLM memory plan holds the model, with an
    fp8 KV cache (the most sequences any run of these weights could hold: a real run with a
    bf16 cache holds fewer, so it stays below the bound)."""
    kv_cache_dtype = "fp8"
    memory = int(gpu_memory_bytes(gpu))
    fewest = math.ceil(weights / memory)
    option = GpuOption(gpu.id, gpu.name, memory, gpu.memory_gb)
    for count in (n for n in GPU_COUNTS if n >= fewest):
        try:
            settings = VllmSettings(
                gpu_memory_bytes=memory, quantization=quantization, kv_cache_dtype=kv_cache_dtype
            )
            fit = fit_gpu(
                arch, option, settings, input_tokens + output_tokens, 1, min_gpu_count=count
            )
            if fit.gpu_count != count or fit.report is None:
                continue
            batch, bound = bound_at_plan(arch, gpu, fit.report.plan, input_tokens, output_tokens)
        except CalculatorError:
            continue
        yield _Bound(
            gpu.id,
            count,
            bound.tokens_per_second,
            f"the roofline bound ({bound.limited_by}) at {batch:,} sequences, the most the vLLM "
            "memory plan holds with an fp8 KV cache: no run can beat it, so a real token costs "
            "more",
        )


class AnswerEstimator:
    """The estimate beside an answer nothing qualifies for, for the CLI and the site alike: the
    prediction with its measured error where the question's kind of figure (`estimate_kind`)
    met its target in `held_out` (the published table by default), the cheapest over the
    deployments the bound considers; else the roofline bound, naming the target the prediction
    missed (`missed_target`). The predictor bounds p99 TTFT and TPOT (meeting them meets any lower
    percentile); a question with an E2E bound gets the bound, saying so."""

    def __init__(self, roofline: RooflineEstimator, held_out: HeldOut = HELD_OUT) -> None:
        self.roofline, self.held_out = roofline, held_out

    def slo_independent(self, kind: str) -> bool:
        """Whether the kind's estimate is the same at every SLO (the batch question's, or a
        bound): what the site can publish for the browser."""
        return kind == "offline" or missed_target(kind, self.held_out) is not None

    def __call__(self, question: Question, workload_key: str, precision: str) -> Estimate | None:
        kind = estimate_kind(question.slo)
        missed = missed_target(kind, self.held_out)
        if missed is None and question.slo.e2e_ms is None:
            predicted = self._predicted(question, workload_key, precision, kind)
            if predicted is not None:
                return predicted
            missed = f"{kind}: the predictor gives no deployment a figure for this question"
        elif missed is None:
            missed = f"{kind}: the predictor does not model an E2E bound"
        bound = self.roofline(question, workload_key, precision)
        if bound is None:
            return None
        return replace(bound, missed_target=missed)

    def _predicted(
        self, question: Question, workload_key: str, precision: str, kind: str
    ) -> Estimate | None:
        roofline = self.roofline
        tokens = roofline.tokens.get((question.model, workload_key))
        model = roofline.models.get(question.model)
        if tokens is None or model is None or not _predictable(precision):
            return None
        weights = None if precision == UNQUANTIZED else precision
        slo = question.slo
        at = None if slo.is_batch else PredictorSlo(ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms)
        best: Estimate | None = None
        for bound in roofline.bounds(model, precision, *tokens):
            price = cheapest_price(roofline.prices, bound.gpu, question.tier)
            if price is None:
                continue
            gpu = roofline.gpus[bound.gpu]
            per_s = predicted_tokens_per_s(model, gpu, bound.gpu_count, weights, *tokens, at)
            if not per_s:
                continue
            usd = usd_per_million_tokens(price.usd_per_gpu_hour * bound.gpu_count, per_s)
            if best is None or usd < best.usd_per_million_output_tokens:
                best = Estimate(
                    bound.gpu, bound.gpu_count, precision, PREDICTION, per_s, usd, price.id,
                    error_label(kind, self.held_out), question.tier, price.usd_per_gpu_hour,
                )  # fmt: skip
        return best


def _predictable(precision: str) -> bool:
    """Whether the predictor models these weights (16-bit, or a format it names)."""
    return precision == UNQUANTIZED or precision.lower() in QUANTIZATION_BY_PRECISION


def workload_tokens_of(points: Iterable[Point]) -> dict[tuple[str, str], tuple[int, int]]:
    """(model, workload key) → its typical (input, output) tokens, where stated."""
    return {
        (p.model, p.workload_key): (p.input_tokens, p.output_tokens)
        for p in points
        if p.input_tokens is not None and p.output_tokens
    }


# A question of the `server` kind, for an estimate that is the same at every SLO (a bound).
ANY_SLO = Slo(99.0, ttft_ms=math.inf)


def every_estimate(
    evidence: Evidence, estimator: AnswerEstimator
) -> dict[tuple[str, str, str, str, str], Estimate]:
    """(model, workload key, precision, tier, kind) → the estimate, for every evidence group,
    every price tier the evidence's prices offer and each kind of question (`estimate_kind`)
    whose estimate is the same at every SLO: what the browser shows where nothing qualifies."""
    tiers = sorted({p.tier for p in evidence.prices})
    estimates = {}
    for model, workload_key, precision in sorted(
        {(p.model, p.workload_key, p.precision) for p in evidence.points}
    ):
        for tier in tiers:
            for kind, slo in (("offline", Slo()), ("server", ANY_SLO)):
                if not estimator.slo_independent(kind):
                    continue
                found = estimator(Question(model, slo, tier), workload_key, precision)
                if found is not None:
                    estimates[(model, workload_key, precision, tier, kind)] = found
    return estimates


def answer_estimator(
    root: Path, evidence: Evidence, held_out: HeldOut = HELD_OUT
) -> AnswerEstimator:
    """The estimator of the registry checkout at `root` (`AnswerEstimator`)."""
    catalogs = root / "registry" / "catalogs"
    roofline = RooflineEstimator(
        load_gpus(catalogs / "gpus.yaml"),
        load_models(catalogs / "models.yaml"),
        evidence.prices,
        workload_tokens_of(evidence.points),
    )
    return AnswerEstimator(roofline, held_out)


# --- questions ------------------------------------------------------------------------------


def check_question(question: Question, evidence: Evidence) -> None:
    """Raise AnswerInputError naming the option when the registry holds nothing to ask."""
    models = sorted({p.model for p in evidence.points})
    if question.model not in models:
        raise AnswerInputError(
            f"--model: no result for {question.model!r}; models with results: {', '.join(models)}"
        )
    tiers = sorted({p.tier for p in evidence.prices})
    if question.tier not in tiers:
        raise AnswerInputError(f"--tier: expected one of {', '.join(tiers)}, not {question.tier!r}")
    mine = [p for p in evidence.points if p.model == question.model]
    for option, wanted, known in (
        ("--workload", question.workload_key, {p.workload_key for p in mine}),
        ("--precision", question.precision, {p.precision for p in mine}),
    ):
        if wanted is not None and wanted not in known:
            raise AnswerInputError(
                f"{option}: {question.model} has no result for {wanted!r}; "
                f"it has {', '.join(sorted(known))}"
            )


def ask(evidence: Evidence, question: Question, estimator: Estimator | None = None) -> list[Answer]:
    """The answers to a question the registry can be asked (`check_question` first)."""
    check_question(question, evidence)
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


def resolve_workload(evidence: Evidence, model: str, workload: str | None) -> str | None:
    """A workload as the reader typed it (its key, or its label as pages show it) → its key."""
    if workload is None:
        return None
    for point in evidence.points:
        if point.model == model and workload in (point.workload_key, point.workload):
            return point.workload_key
    return workload  # check_question names it as unknown


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:,.4f}"


def _answer_head(found: Answer) -> str:
    return (
        f"{found.workload} · {found.precision} · {found.scenario} · {found.lane} lane "
        f"(workload {found.workload_key})"
    )


def _row_line(place: int, row: Any) -> str:
    point, price = row.point, row.price
    price_text = (
        "no price"
        if price is None
        else f"{price.provider} {price.tier} ${price.usd_per_gpu_hour:,.2f}/GPU-h, "
        f"{price.as_of}, confidence {price.confidence or 'not stated'}"
    )
    ratio = "" if row.ratio_to_winner is None else f" ×{row.ratio_to_winner:.2f}"
    mlperf = f", MLPerf {point.mlperf_result_id}" if point.mlperf_result_id else ""
    return (
        f"  {place}. {point.gpu_count} × {point.gpu}: {_usd(row.usd_per_million_accepted)}/1M "
        f"accepted{ratio} ({row.acceptance.accepted_tokens_per_s:,.0f} tok/s; {price_text}; "
        f"result {point.result_id}{mlperf}; {point.load})"
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
    question = Question(model, slo, tier, resolve_workload(evidence, model, workload), precision)
    estimator = answer_estimator(root, evidence) if estimate else None
    return question, ask(evidence, question, estimator)


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
                f"  no point meets this; nearest miss {point.gpu_count} × {point.gpu} "
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
    return "\n".join(lines)
