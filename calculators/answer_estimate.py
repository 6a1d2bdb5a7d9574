"""The estimate beside an answer nothing qualifies for, at the question's own weight precision:
one piece of code for `registry answer`, the site build (answer pages, presets, model pages) and
the browser (the answer page's Pyodide worker), so each shows the same number.

Where the question's kind of figure (`answer.estimate_kind`: offline for the batch question,
server for an SLO) met its error target on every held-out split (`perf_labels`), the estimate
is the fitted predictor's figure with its measured error, the cheapest over the deployments the
roofline bound considers. Otherwise it is the roofline bound (`roofline`), labelled as a bound
no run can beat and naming the target the prediction missed; under a TTFT or TPOT bound it is
drawn within them (`AnswerEstimator._within_slo`), so it too depends on the SLO.

Plain data in (config.json dicts, `predict.Gpu`, `answer.Price`), stdlib only:

    estimator = AnswerEstimator(configs, gpus, prices, tokens, held_out)
    estimator(Question("llama-3.1-8b-instruct", Slo(99, ttft_ms=500), "on_demand"), key, "fp8")
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from infermeter.calculators.accepted import Point, Slo, bound_text
from infermeter.calculators.answer import (
    PREDICTION,
    ROOFLINE_BOUND,
    Estimate,
    NoEstimate,
    Price,
    Question,
    cheapest_price,
    estimate_kind,
)
from infermeter.calculators.checkpoint_export import checkpoint_run, export_note
from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.fit import GPU_COUNTS, GpuOption, fit_gpu
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.perf_api import PerfRequest, perf
from infermeter.calculators.perf_datasets import DatasetLengths, dataset_key, dataset_lengths
from infermeter.calculators.perf_fit import HELD_OUT
from infermeter.calculators.perf_labels import HeldOut, error_label, held_out_error, missed_target
from infermeter.calculators.predict import Deployment, Gpu, P99Bounds, smallest_tensor_parallel
from infermeter.calculators.quantization import MXFP4_ONLINE_SINCE, weight_bytes, weight_format
from infermeter.calculators.roofline import (
    ThroughputBound,
    plan_throughput_bound,
    prefill_seconds_bound,
)
from infermeter.calculators.token_cost import usd_per_million_tokens
from infermeter.calculators.vllm_plan import VllmPlan
from infermeter.calculators.vllm_settings import (
    DEFAULT_VLLM_VERSION,
    VllmSettings,
    beyond_the_model,
    parse_release,
)

UNQUANTIZED = "16-bit"  # the weight precision of a result that names no quantization

# A weight precision as results name it → the predictor's quantization.
QUANTIZATION_BY_PRECISION = {
    "fp8": "fp8",
    "fp4": "nvfp4",
    "nvfp4": "nvfp4",
    "mxfp4": "mxfp4",
    "int4": "awq",
}
# What a bound says where the question bounds E2E but the workload states no shortest output
# (a data set's lengths): the bound is drawn as if it did not (still a bound, a looser one).
E2E_NOT_DRAWN = (
    "not drawn within the E2E bound: the workload states no shortest output to spread it over"
)
# Why a group has no estimate where its workload gives the estimate no request to plan.
NO_TYPICAL_LENGTHS = (
    "this workload states no typical input and output lengths, and the calculators know no "
    "mean lengths of its data set"
)
# A weight precision → the quantization the bound's weight format reads (16-bit: none), as
# the predictor reads it.
_BOUND_QUANTIZATION = {UNQUANTIZED: "none", **QUANTIZATION_BY_PRECISION}
# A model without routed experts has "mxfp4" results only from checkpoints with every linear layer
# in MXFP4 (AMD's Quark Llama 2 70B in MLPerf). vLLM's --quantization mxfp4 of its 16-bit
# checkpoint builds only routed experts in MXFP4 up to 0.27 (Mxfp4Config.get_quant_method), so at
# the release the estimate plans (DEFAULT_VLLM_VERSION) that model runs in 16-bit
# (`quantization.weight_format`): a bound such weights beat, under the mxfp4 heading. From 0.28
# vLLM quantizes every linear layer to MXFP4 as it loads (MXFP4_ONLINE_SINCE). The estimate plans
# those weights at that release and says so; the predictor, which plans the default release and
# was fitted on no such weights, gives none.
ONLINE_MXFP4_RELEASE = ".".join(map(str, MXFP4_ONLINE_SINCE))
ONLINE_MXFP4_NOTE = (
    f"; planned as vLLM {ONLINE_MXFP4_RELEASE}+ serves --quantization mxfp4 of the 16-bit "
    "checkpoint (every linear layer in MXFP4: earlier releases convert only MoE experts, and this "
    "model has none)"
)


def bound_release(arch: ModelArch, quantization: str) -> str | None:
    """The vLLM release the estimate plans `quantization` of `arch` at where the default release
    does not serve it as such (ONLINE_MXFP4_RELEASE, see above); None: the default."""
    if quantization != "mxfp4":
        return None
    try:
        planned = weight_format(arch, quantization, None, parse_release(DEFAULT_VLLM_VERSION))
        online = weight_format(arch, quantization, None, MXFP4_ONLINE_SINCE)
    except CalculatorError:  # no release serves it (an FP8 checkpoint): no bound either
        return None
    return ONLINE_MXFP4_RELEASE if planned.method != online.method else None


def most_memory_bytes(memory_gb: float, reported_mib: int | None) -> int:
    """The most memory one GPU can have in use: the larger of its marketed and reported size
    (what the bound and the predictor plan with, so a real run holds no more)."""
    reported = reported_mib * 2**20 if reported_mib is not None else 0
    return int(max(memory_gb * 1e9, reported))


def native_precision(config: Mapping[str, Any]) -> str:
    """The weight precision a checkpoint ships in, as results name it: its quantization
    method (`fp8`, `mxfp4` …) or 16-bit."""
    method = (config.get("quantization_config") or {}).get("quant_method")
    return UNQUANTIZED if not method else str(method).lower()


def step_seconds(bound: ThroughputBound) -> float:
    """The least time of a decode step at the bound's batch: its sequences ÷ its tokens/s (under
    pipeline parallelism the slowest stage's, shorter than a token's trip through every stage:
    still a bound on a request's TPOT)."""
    return bound.batch / bound.tokens_per_second


def bound_at_plan(
    arch: ModelArch,
    gpu: Gpu,
    plan: VllmPlan,
    tokens: tuple[int, int],
    step_limit_s: float = math.inf,
    fewest_over: int | None = None,
) -> tuple[int, ThroughputBound]:
    """The decode roofline bound of `gpu` for requests of `tokens` (input, output) at the most
    sequences the vLLM `plan` holds whose decode step (`step_seconds`) stays within
    `step_limit_s`, and that batch; where even one sequence's step exceeds it, at one sequence
    (the caller judges it). A step grows with its batch, so a bisection finds the batch;
    `fewest_over`: a batch whose step the caller knows exceeds the limit."""

    def at(batch: int) -> ThroughputBound:
        return plan_throughput_bound(
            arch,
            plan.settings,
            gpu.memory_bandwidth_gb_s,
            dict(gpu.tflops_dense),
            tokens[0] + tokens[1] // 2,  # the mean context of an output token
            batch,
            tuple(gpu.links),
        )

    over = fewest_over or max(1, min(plan.max_num_seqs, math.floor(plan.max_concurrency)))
    if fewest_over is None:
        bound = at(over)
        if over == 1 or step_seconds(bound) <= step_limit_s:
            return over, bound
    bound = at(1)
    if over == 1 or step_seconds(bound) > step_limit_s:
        return 1, bound
    within = 1
    while over - within > 1:
        middle = (within + over) // 2
        found = at(middle)
        if step_seconds(found) <= step_limit_s:
            within, bound = middle, found
        else:
            over = middle
    return within, bound


@dataclass(frozen=True)
class EstimateGpu:
    """A catalog GPU as the estimate reads it."""

    gpu: Gpu  # as the predictor reads it: memory as the driver reports it
    most_memory_bytes: int  # what the bound plans with (`most_memory_bytes`)


@dataclass(frozen=True)
class Bound:
    """One deployment's roofline bound, whatever it costs: priced per tier afterwards."""

    gpu: str
    gpu_count: int
    tokens_per_s: float
    batch: int  # sequences the memory plan holds (within a TPOT bound: `AnswerEstimator`)
    interconnect: str  # what the bound counts of the traffic between GPUs
    note: str
    step_s: float = 0.0  # its decode step's least time (`step_seconds`)
    plan: VllmPlan | None = field(default=None, compare=False, repr=False)  # drawn on this plan
    release_note: str = ""  # what the note says of the vLLM release planned (ONLINE_MXFP4_NOTE)


def _bound(
    gpu: str,
    count: int,
    plan: VllmPlan,
    drawn: tuple[int, ThroughputBound],
    release_note: str,
    within: str = "",
) -> Bound:
    """A deployment's `Bound` at the (batch, bound) `drawn` on its `plan`; `within`: what
    limits the batch below the plan's most sequences, in the note's words."""
    batch, bound = drawn
    return Bound(
        gpu,
        count,
        bound.tokens_per_second,
        batch,
        bound.interconnect,
        f"the roofline bound ({bound.limited_by}) at {batch:,} sequences{within}{release_note}",
        step_seconds(bound),
        plan,
        release_note,
    )


def gpu_bounds(
    arch: ModelArch, quantization: str, gpu: EstimateGpu, input_tokens: int, output_tokens: int
) -> Iterable[Bound]:
    """The roofline bound of each GPU count whose vLLM memory plan holds the model, with an
    fp8 KV cache and the GPU's most memory (the most sequences any run of these weights could
    hold: a real run holds fewer, so it stays below the bound)."""
    release = bound_release(arch, quantization) or DEFAULT_VLLM_VERSION
    fmt = weight_format(arch, quantization, None, parse_release(release))
    weights = weight_bytes(arch, fmt).total
    memory = gpu.most_memory_bytes
    fewest = math.ceil(weights / memory)
    option = GpuOption(gpu.gpu.id, gpu.gpu.id, memory, memory / 1e9, traits=gpu.gpu.traits)
    for count in (n for n in GPU_COUNTS if n >= fewest):
        try:
            settings = VllmSettings(
                gpu_memory_bytes=memory,
                quantization=quantization,
                kv_cache_dtype="fp8",
                vllm_version=release,
            )
            fit = fit_gpu(
                arch, option, settings, input_tokens + output_tokens, 1, min_gpu_count=count
            )
            if fit.gpu_count != count or fit.report is None:
                continue
            plan = fit.report.plan
            drawn = bound_at_plan(arch, gpu.gpu, plan, (input_tokens, output_tokens))
        except CalculatorError:
            continue
        note = ONLINE_MXFP4_NOTE if release == ONLINE_MXFP4_RELEASE else ""
        yield _bound(gpu.gpu.id, count, plan, drawn, note)


def _ms(seconds: float) -> str:
    """A time in a note's words, ms: two significant figures below 10 ms, else whole ms."""
    ms = seconds * 1e3
    return f"{ms:.2g}" if ms < 10 else f"{ms:,.0f}"


@dataclass(frozen=True)
class StepBound:
    """The longest mean decode step a question lets a run take, in ms, and what sets it: its
    TPOT bound, or its E2E bound spread over the steps of the workload's shortest output (each
    token after the first), whichever is shorter. Prefill is not counted, so a run meeting the
    E2E bound takes no longer steps: a bound drawn within it stays a bound."""

    ms: float
    said: str


def step_bound(slo: Slo, shortest_output: int | None) -> StepBound | None:
    """The question's `StepBound`; None where it bounds neither TPOT nor, over an output the
    workload states the shortest of, E2E."""
    found = []
    if slo.tpot_ms is not None:
        found.append(StepBound(slo.tpot_ms, f"TPOT ≤ {bound_text(slo.tpot_ms)} ms"))
    if slo.e2e_ms is not None and shortest_output is not None and shortest_output > 1:
        steps = shortest_output - 1
        ms = slo.e2e_ms / steps
        found.append(
            StepBound(
                ms,
                f"E2E ≤ {bound_text(slo.e2e_ms)} ms over the {steps:,} steps of the shortest "
                f"output ({_ms(ms / 1e3)} ms each)",
            )
        )
    return min(found, key=lambda bound: bound.ms, default=None)


@dataclass
class _SloCut:
    """A question's longest decode step (`StepBound`), and the fastest of the bounds its TTFT
    bound and that step leave out ((seconds, bound): one prompt's prefill, a one-sequence decode
    step), for why none is left."""

    longest_step: StepBound | None = None
    prefill: tuple[float, Bound] | None = None
    step: tuple[float, Bound] | None = None

    def reason(self, slo: Slo, input_tokens: int) -> str:
        """Why no deployment of the priced GPUs is left (`kept` empty)."""
        parts = []
        # each is noted only where its bound is set (`_within_slo`)
        if self.prefill is not None and slo.ttft_ms is not None:
            seconds, bound = self.prefill
            parts.append(
                f"prefills one prompt of {input_tokens:,} tokens within TTFT ≤ "
                f"{bound_text(slo.ttft_ms)} ms (the fastest: {_ms(seconds)} ms at "
                f"{bound.gpu_count} × {bound.gpu})"
            )
        if self.step is not None and self.longest_step is not None:
            seconds, bound = self.step
            parts.append(
                f"decodes a step within {self.longest_step.said} (the fastest: "
                f"{_ms(seconds)} ms at {bound.gpu_count} × {bound.gpu})"
            )
        return "no deployment of the priced GPUs " + " and ".join(parts)


def _fastest(
    found: tuple[float, Bound] | None, seconds: float, bound: Bound
) -> tuple[float, Bound]:
    return (seconds, bound) if found is None or seconds < found[0] else found


def predicted_bounds(slo: Slo) -> P99Bounds | None:
    """The bounds the predictor judges a reader's `slo` by: its TTFT and TPOT bounds at p99,
    which meets them at any lower percentile too (None: the batch question). An E2E bound it
    does not model: such a question gets the roofline bound instead (`AnswerEstimator`)."""
    return None if slo.is_batch else P99Bounds(ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms)


def predicted_tokens_per_s(
    arch: ModelArch,
    gpu: Gpu,
    gpu_count: int,
    precision: str | None,
    input_tokens: int,
    output_tokens: int,
    slo: P99Bounds | None = None,
) -> float | None:
    """The predictor's output tokens/s (never the bound) for `gpu_count` × `gpu` serving `arch`
    at `precision` (the checkpoint's own when None or 16-bit): offline without `slo`, else at
    the highest rate whose predicted p99 TTFT and TPOT meet it; None where it predicts nothing
    (the model does not fit, no rate meets the SLO) or the deployment is not `gpu_count` GPUs."""
    try:
        quantization = QUANTIZATION_BY_PRECISION.get((precision or "").lower())
        deployment = Deployment(
            arch=arch,
            gpu=gpu,
            quantization=quantization,
            kv_cache_dtype="fp8" if quantization else None,
        )
        tensor = smallest_tensor_parallel(deployment, gpu_count)
        deployment = replace(
            deployment, tensor_parallel_size=tensor, data_parallel_size=max(1, gpu_count // tensor)
        )
        request = PerfRequest(
            model="",
            deployment=deployment,
            input_len=input_tokens,
            output_len=output_tokens,
            dataset=None,
            concurrency=None,
            request_rate=None,
            offline=True,
            static_batch=None,
            slo_ttft_ms=None if slo is None else slo.ttft_ms,
            slo_tpot_ms=None if slo is None else slo.tpot_ms,
            price_per_hour=None,
        )
        payload = perf(request, None)
    except CalculatorError:
        return None
    if deployment.layout.gpus != gpu_count:
        return None
    tokens = (
        payload["output_tokens_per_s"] if slo is None else payload["output_tokens_per_s_at_slo"]
    )
    return float(tokens) if tokens else None


@dataclass(frozen=True)
class WorkloadTokens:
    """A workload's typical request as the estimate plans it: its stated lengths, or, where it
    states only a data set's, that data set's mean lengths (`dataset`)."""

    input_tokens: int
    output_tokens: int
    dataset: DatasetLengths | None = None
    shortest_output: int | None = None  # the shortest output the workload states, if any

    @property
    def note(self) -> str:
        """What an estimate at these lengths says of them ("" for stated lengths)."""
        if self.dataset is None:
            return ""
        approximate = " (the input an approximate figure)" if self.dataset.input_approximate else ""
        return (
            f"planned at the mean lengths of the {self.dataset.name} data set, "
            f"{self.input_tokens:,} → {self.output_tokens:,} tokens{approximate}"
        )


def _point_tokens(point: Point) -> WorkloadTokens | None:
    if point.input_tokens is not None and point.output_tokens:
        return WorkloadTokens(
            point.input_tokens, point.output_tokens, shortest_output=point.shortest_output_tokens
        )
    if point.dataset is None or dataset_key(point.dataset) is None:
        return None
    lengths = dataset_lengths(point.dataset)
    return WorkloadTokens(round(lengths.input_tokens), round(lengths.output_tokens), lengths)


def workload_tokens_of(points: Iterable[Point]) -> dict[tuple[str, str], WorkloadTokens]:
    """(model, workload key) → its typical request (`WorkloadTokens`), where the workload
    states lengths or the calculators know its data set's."""
    found = {(p.model, p.workload_key): _point_tokens(p) for p in points}
    return {key: tokens for key, tokens in found.items() if tokens is not None}


def _cheaper(best: Estimate | None, found: Estimate | None) -> Estimate | None:
    """The cheaper per output token of two estimates (the first of equals)."""
    if found is None or (
        best is not None
        and found.usd_per_million_output_tokens >= best.usd_per_million_output_tokens
    ):
        return best
    return found


def _predictable(precision: str) -> bool:
    """Whether the predictor models these weights (16-bit, or a format it names)."""
    return precision == UNQUANTIZED or precision.lower() in QUANTIZATION_BY_PRECISION


class AnswerEstimator:
    """Per question, at its weight precision and price tier, over the priced GPUs of `gpus`
    (in id order) and every GPU count whose memory plan fits: the cheapest prediction with its
    measured error where the question's kind of figure met its target in `held_out`, else the
    cheapest roofline bound naming the target the prediction missed. The predictor bounds p99
    TTFT and TPOT (meeting them meets any lower percentile); a question with an E2E bound gets
    the bound, drawn within it over the workload's shortest output (`step_bound`). `tokens`:
    (model, workload key) → its typical (input, output)."""

    def __init__(
        self,
        configs: Mapping[str, Mapping[str, Any]],
        gpus: Mapping[str, EstimateGpu],
        prices: Sequence[Price],
        tokens: Mapping[tuple[str, str], WorkloadTokens],
        held_out: HeldOut = HELD_OUT,
    ) -> None:
        self.configs, self.prices, self.tokens, self.held_out = configs, prices, tokens, held_out
        priced = {p.gpu for p in prices}
        self.gpus = {gpu_id: gpus[gpu_id] for gpu_id in sorted(gpus) if gpu_id in priced}
        # Each GPU's cheapest price per tier, looked up once: every bound of every question is
        # priced with it.
        self._cheapest = {
            (gpu, tier): cheapest_price(prices, gpu, tier)
            for gpu, tier in {(p.gpu, p.tier) for p in prices}
        }
        self._archs: dict[str, ModelArch | None] = {}
        self._bounds: dict[tuple[str, str, int, int], list[Bound]] = {}
        # (model, precision, tokens, tier, TTFT bound, longest step) → `_cheapest_bound`
        self._cheapest_bounds: dict[
            tuple[str, str, tuple[int, int], str, float | None, StepBound | None],
            Estimate | NoEstimate | None,
        ] = {}
        # why the memory plan refuses the weights, for a key of `_bounds` it refuses
        self._refused: dict[tuple[str, str, int, int], str] = {}

    def slo_independent(self, kind: str) -> bool:
        """Whether the kind's estimate is the same at every SLO: the batch question's alone (a
        prediction is made at the reader's bounds, and a bound drawn within them): what the site
        can publish for the browser ahead of any question."""
        return kind == "offline"

    def __call__(
        self, question: Question, workload_key: str, precision: str
    ) -> Estimate | NoEstimate | None:
        # a workload's lengths are its own, whichever model ran it: a model without results is
        # planned at another's
        tokens = self.tokens.get((question.model, workload_key)) or next(
            (found for (_model, key), found in self.tokens.items() if key == workload_key), None
        )
        if tokens is None:
            return NoEstimate(NO_TYPICAL_LENGTHS)
        found = self.estimate(
            question, (tokens.input_tokens, tokens.output_tokens), precision, tokens.shortest_output
        )
        if isinstance(found, Estimate) and tokens.note:
            return replace(found, note=f"{found.note}; {tokens.note}")
        return found

    def estimate(
        self,
        question: Question,
        tokens: tuple[int, int],
        precision: str,
        shortest_output: int | None = None,
    ) -> Estimate | NoEstimate | None:
        """The estimate for a request of `tokens` (input, output) at `precision`, a bound
        within an E2E bound over the `shortest_output` (`step_bound`) where one is known; where
        there is none because the memory plan refuses the weights, why (`NoEstimate`). Weights
        the catalog's checkpoint is not served in are planned as an export in their format
        (`checkpoint_export`), and the estimate says so."""
        arch = self.arch(question.model)
        refused = None if arch is None else beyond_the_model(arch, sum(tokens))
        if refused is not None:
            return NoEstimate(
                f"a request of {tokens[0]:,} → {tokens[1]:,} tokens ({sum(tokens):,} in all) "
                f"{refused}"
            )
        kind = estimate_kind(question.slo)
        missed = missed_target(kind, self.held_out)
        found: Estimate | NoEstimate | None = None
        if missed is None and question.slo.e2e_ms is None:
            found = self._predicted(question, tokens, precision, kind)
            missed = f"{kind}: the predictor gives no deployment a figure for this question"
        elif missed is None:
            missed = f"{kind}: the predictor does not model an E2E bound"
        if found is None:
            longest = step_bound(question.slo, shortest_output)
            found = self._bound_estimate(question, tokens, precision, longest, missed)
        if not isinstance(found, Estimate):
            return found
        checkpoint = self.checkpoint(question.model, precision)
        notes = [
            *([E2E_NOT_DRAWN] if question.slo.e2e_ms and (shortest_output or 0) <= 1 else []),
            *([checkpoint[1]] if checkpoint is not None and checkpoint[1] else []),
        ]
        return replace(found, note="; ".join([found.note, *notes]))

    def _bound_estimate(
        self,
        question: Question,
        tokens: tuple[int, int],
        precision: str,
        longest: StepBound | None,
        missed: str,
    ) -> Estimate | NoEstimate | None:
        """The cheapest bound within the question's bounds (`_cheapest_bound`), naming the
        target the prediction `missed`; where there is none, why (None: the plan refused
        nothing, it holds no deployment)."""
        bound = self._cheapest_bound(question, tokens, precision, longest)
        if isinstance(bound, NoEstimate):
            return bound
        if bound is None:
            refused = self._refused.get((question.model, precision, tokens[0], tokens[1]))
            return None if refused is None else NoEstimate(refused)
        return replace(bound, missed_target=missed)

    def arch(self, model: str) -> ModelArch | None:
        """The model's parsed config; None when the calculators cannot read it."""
        if model not in self._archs:
            config = self.configs.get(model)
            try:
                self._archs[model] = None if config is None else parse_config(dict(config))
            except CalculatorError:
                self._archs[model] = None
        return self._archs[model]

    def checkpoint(self, model: str, precision: str) -> tuple[ModelArch, str] | None:
        """The model as the checkpoint a result at `precision` ran (`checkpoint_run`: the
        catalog's, or an export in that format) and what an estimate planned on it says of its
        weights (an export's note; "" for the catalog's checkpoint); None as `arch`."""
        arch = self.arch(model)
        if arch is None:
            return None
        quantization = _BOUND_QUANTIZATION.get(precision, precision)
        planned = checkpoint_run(arch, quantization)
        if planned is arch:
            return planned, ""
        return planned, export_note(native_precision(self.configs[model]), quantization)

    def bounds(
        self, model: str, precision: str, input_tokens: int, output_tokens: int
    ) -> list[Bound]:
        """Every priced GPU's bound at every count whose vLLM memory plan fits, worked out once."""
        key = (model, precision, input_tokens, output_tokens)
        if key not in self._bounds:
            checkpoint = self.checkpoint(model, precision)
            quantization = _BOUND_QUANTIZATION.get(precision, precision)
            found: list[Bound] = []
            for gpu in self.gpus.values():
                if checkpoint is None:
                    break
                arch = checkpoint[0]
                try:
                    found += gpu_bounds(arch, quantization, gpu, input_tokens, output_tokens)
                except CalculatorError as error:
                    # the plan refuses the weights (unreadable, or a quantization vLLM refuses
                    # of this checkpoint): the same for every GPU, and the answer says why
                    self._refused[key] = str(error)
                    break
            self._bounds[key] = found
        return self._bounds[key]

    def _priced(self, question: Question, bound: Bound, tokens_per_s: float) -> Estimate | None:
        price = self._cheapest.get((bound.gpu, question.tier))
        if price is None:
            return None
        usd = usd_per_million_tokens(price.usd_per_gpu_hour * bound.gpu_count, tokens_per_s)
        return Estimate(
            gpu=bound.gpu,
            gpu_count=bound.gpu_count,
            precision="",
            kind=ROOFLINE_BOUND,
            output_tokens_per_s=tokens_per_s,
            usd_per_million_output_tokens=usd,
            price_id=price.id,
            note=bound.note,
            tier=question.tier,
            usd_per_gpu_hour=price.usd_per_gpu_hour,
        )

    def _cheapest_bound(
        self, question: Question, tokens: tuple[int, int], precision: str, longest: StepBound | None
    ) -> Estimate | NoEstimate | None:
        """The cheapest bound at the question's tier, within its TTFT bound and longest step
        (`step_bound`, `_within_slo`); where those leave no deployment, why. Worked out once per
        question."""
        cut = _SloCut(longest)
        slo = question.slo
        key = (question.model, precision, tokens, question.tier, slo.ttft_ms, cut.longest_step)
        if key not in self._cheapest_bounds:
            found = self._cheapest_within(question, tokens, precision, cut)
            self._cheapest_bounds[key] = (
                found if not isinstance(found, Estimate) else replace(found, precision=precision)
            )
        return self._cheapest_bounds[key]

    def _cheapest_within(
        self, question: Question, tokens: tuple[int, int], precision: str, cut: _SloCut
    ) -> Estimate | NoEstimate | None:
        # Each bound priced at the plan's most sequences, cheapest first (the first of equals in
        # `bounds`' order): one within the SLO costs no less, so the search stops at the first
        # whose plan's figure is dearer than the cheapest found within it.
        bounds = self.bounds(question.model, precision, *tokens)
        priced = sorted(
            (found.usd_per_million_output_tokens, index, found, bound)
            for index, bound in enumerate(bounds)
            if (found := self._priced(question, bound, bound.tokens_per_s)) is not None
        )
        slo, checkpoint = question.slo, self.checkpoint(question.model, precision)
        if checkpoint is None or (cut.longest_step is None and slo.ttft_ms is None) or not priced:
            return priced[0][2] if priced else None
        best: tuple[float, int, Estimate] | None = None
        for usd, index, _found, bound in priced:
            if best is not None and usd > best[0]:
                break
            within = self._within_slo(checkpoint[0], bound, tokens, slo, cut)
            found = None if within is None else self._priced(question, within, within.tokens_per_s)
            if found is not None and (
                best is None or (found.usd_per_million_output_tokens, index) < best[:2]
            ):
                best = (found.usd_per_million_output_tokens, index, found)
        return NoEstimate(cut.reason(slo, tokens[0])) if best is None else best[2]

    def _within_slo(
        self, arch: ModelArch, bound: Bound, tokens: tuple[int, int], slo: Slo, cut: _SloCut
    ) -> Bound | None:
        """`bound` within `slo`: None where one prompt's prefill alone exceeds its TTFT bound
        (`prefill_seconds_bound`) or one sequence's decode step the longest step it allows
        (`cut.longest_step`: its TPOT bound, or its E2E bound over the shortest output; noted in
        `cut`), else drawn at the most sequences whose decode step stays within that
        (`bound_at_plan`). Any run meeting the bounds prefills no faster, and its mean step is
        no longer than that, so it stays a bound."""
        gpu, plan = self.gpus[bound.gpu].gpu, bound.plan
        assert plan is not None  # every bound of `bounds` is drawn on its plan
        if slo.ttft_ms is not None:
            prefill = prefill_seconds_bound(arch, plan.settings, gpu.tflops_dense, tokens[0])
            if prefill is not None and prefill * 1e3 > slo.ttft_ms:
                cut.prefill = _fastest(cut.prefill, prefill, bound)
                return None
        longest = cut.longest_step
        if longest is None or bound.step_s * 1e3 <= longest.ms:
            return bound
        drawn = bound_at_plan(arch, gpu, plan, tokens, longest.ms / 1e3, bound.batch)
        within = _bound(
            bound.gpu,
            bound.gpu_count,
            plan,
            drawn,
            bound.release_note,
            f", the most whose decode step stays within {longest.said}",
        )
        if within.step_s * 1e3 > longest.ms:
            cut.step = _fastest(cut.step, within.step_s, within)
            return None
        return within

    def _predicted(
        self, question: Question, tokens: tuple[int, int], precision: str, kind: str
    ) -> Estimate | None:
        checkpoint = self.checkpoint(question.model, precision)
        if checkpoint is None or not _predictable(precision):
            return None
        arch = checkpoint[0]
        if bound_release(arch, _BOUND_QUANTIZATION.get(precision, precision)) is not None:
            return None  # weights the predictor's release does not serve (see above)
        weights = None if precision == UNQUANTIZED else precision
        at = predicted_bounds(question.slo)
        # the error holds only on the GPUs the kind's held-out results were measured on
        # (`perf_labels.beyond_measured`, the label says them); elsewhere it is not known
        measured = held_out_error(kind, self.held_out).get("gpus")
        best: Estimate | None = None
        for bound in self.bounds(question.model, precision, *tokens):
            if measured is not None and bound.gpu not in measured:
                continue
            per_s = predicted_tokens_per_s(
                arch, self.gpus[bound.gpu].gpu, bound.gpu_count, weights, *tokens, at
            )
            found = None if not per_s else self._priced(question, bound, per_s)
            best = _cheaper(best, found)
        if best is None:
            return None
        return replace(
            best, precision=precision, kind=PREDICTION, note=error_label(kind, self.held_out)
        )
