"""The buyer's answer: deployments (GPU × count) ranked by $ per 1M accepted output tokens.

A question names a model, optionally a workload and a weight precision, an SLO (`accepted.Slo`;
no bound = the batch question) and a price tier. The evidence is split into answers that are
each homogeneous in model, workload, precision, scenario and lane: nothing is ranked across
weight precisions, workloads, MLPerf scenarios (Server and Interactive are different SLOs) or
lanes (measured, reported, MLPerf). Within one answer, each deployment's row is its best
qualifying point (most accepted tokens/s, `accepted.accept`) at its GPU's price for the tier
(per GPU-hour × GPU count); rows are ranked cheapest first, each with its ratio to the winner.
A winner whose price is low-confidence says so, with the break-even: the winner's price per
GPU-hour above which the runner-up would win. An answer nothing qualifies for carries its
nearest miss (the point that missed its bounds by the least) and, apart from the ranking, the
estimate the caller's `Estimator` gives (a roofline bound today; a fitted prediction later).

One piece of code for the index, the site build, the browser (Pyodide) and the CLI; plain
data in and out, stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from infermeter.calculators.accepted import Acceptance, Miss, Point, Slo, accept
from infermeter.calculators.cost_inputs import usd_per_hour_at
from infermeter.calculators.token_cost import usd_per_million_tokens

LOW_CONFIDENCE = "low"


@dataclass(frozen=True)
class Price:
    """One catalog price per GPU-hour, with what a reader needs to judge it."""

    id: str
    gpu: str
    tier: str
    usd_per_gpu_hour: float
    provider: str
    as_of: str
    confidence: str | None  # `high`, `medium`, `low`; None where the catalog says nothing
    source_url: str | None = None
    # where the price is well above what the market asks (`registry.prices.above_market`): the
    # cheapest price two providers agree on, and those providers ("lium, vast")
    market_usd_per_gpu_hour: float | None = None
    market_providers: str | None = None
    market_price_id: str | None = None  # the floor's own catalog price

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @property
    def market_text(self) -> str:
        """What the market asks beside a price well above it ("" else), as every ranking says
        it: "market from $1.75/GPU-h (lium, vast)"."""
        if self.market_usd_per_gpu_hour is None:
            return ""
        return f"market from {self.market_price_text} ({self.market_providers})"

    @property
    def market_price_text(self) -> str:
        """The market floor as `market_text` says it ("$1.75/GPU-h"; "" where none)."""
        market = self.market_usd_per_gpu_hour
        return "" if market is None else f"${market:,.2f}/GPU-h"


@dataclass(frozen=True)
class Question:
    """What the reader asks; `workload_key` or `precision` None: each in turn."""

    model: str
    slo: Slo
    tier: str = "on_demand"
    workload_key: str | None = None
    precision: str | None = None


ROOFLINE_BOUND = "roofline bound"
PREDICTION = "prediction"
BOUND_MEANING = (
    "a roofline bound counts the most sequences the vLLM memory plan holds with an fp8 KV cache, "
    "and no more than a TPOT or E2E bound allows: no run can beat it, so a real token costs more"
)


@dataclass(frozen=True)
class Estimate:
    """What a deployment could do where no evidence qualifies: never a measurement. `kind`
    says which (`roofline bound`: no run can beat it; a prediction carries its error)."""

    gpu: str
    gpu_count: int
    precision: str
    kind: str
    output_tokens_per_s: float
    usd_per_million_output_tokens: float
    price_id: str
    note: str
    tier: str  # the price tier the $ figure is at (the question's)
    usd_per_gpu_hour: float
    missed_target: str | None = None  # a bound shown for a prediction that missed its target

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @property
    def shared_note(self) -> str:
        """What the note says that every estimate of its kind at one question says alike: what
        a roofline bound is, and why a bound stands where a prediction would ("" for a
        prediction, whose error is in its own note)."""
        if self.kind != ROOFLINE_BOUND:
            return ""
        if self.missed_target is None:
            return BOUND_MEANING
        return (
            f"{BOUND_MEANING}; the prediction is not shown: its measured error misses the target "
            f"({self.missed_target})"
        )

    @property
    def full_note(self) -> str:
        """The note (this deployment's own facts), then what it shares with its kind."""
        return "; ".join(part for part in (self.note, self.shared_note) if part)


@dataclass(frozen=True)
class NoEstimate:
    """Why a group nothing qualifies for has no estimate either: the vLLM memory plan refuses
    its weights (a quantization method the calculators do not read), in the plan's words, or its
    workload gives no request to plan (`answer_estimate.NO_TYPICAL_LENGTHS`)."""

    reason: str


def estimate_kind(slo: Slo) -> str:
    """The kind of predicted figure a question's estimate is judged by (its held-out error and
    target, `calculators.perf_labels`): `offline` for the batch question, else `server`."""
    return "offline" if slo.is_batch else "server"


def estimate_phrase(estimate: Estimate) -> str:
    """How a page or the CLI introduces an estimate's $ figure: a bound is the best any run
    could do; a prediction is not a limit (a real run may beat it)."""
    return "at best" if estimate.kind == ROOFLINE_BOUND else "predicted"


Estimator = Callable[[Question, str, str], "Estimate | NoEstimate | None"]
"""(question, workload key, precision) → the estimate shown apart where nothing qualifies, or
why there is none (`NoEstimate`); None: nothing to say.
The seam where a fitted predictor plugs in (the site passes the roofline bound's)."""


@dataclass(frozen=True)
class Row:
    """One deployment's place in an answer."""

    point: Point
    acceptance: Acceptance
    price: Price | None
    usd_per_million_accepted: float | None
    ratio_to_winner: float | None = None

    @property
    def market_usd_per_million_accepted(self) -> float | None:
        """Its $ per 1M accepted tokens at the market floor where its price is well above it
        (`Price.market_usd_per_gpu_hour`), in proportion; None else."""
        price, usd = self.price, self.usd_per_million_accepted
        if price is None or usd is None or price.market_usd_per_gpu_hour is None:
            return None
        return usd * price.market_usd_per_gpu_hour / price.usd_per_gpu_hour

    @property
    def market_text(self) -> str:
        """What the market asks beside its price and what its $ figure would be at that
        ("" where its price is not well above the market)."""
        usd = self.market_usd_per_million_accepted
        if self.price is None or usd is None:
            return ""
        return f"{self.price.market_text}: ${usd:,.4f}/1M accepted at that price"

    def as_dict(self) -> dict[str, Any]:
        point, price = self.point, self.price
        return {
            "gpu": point.gpu,
            "gpu_count": point.gpu_count,
            "usd_per_million_accepted": _rounded(self.usd_per_million_accepted),
            "accepted_output_tokens_per_s": _rounded(self.acceptance.accepted_tokens_per_s),
            "ratio_to_winner": _rounded(self.ratio_to_winner),
            "price_id": None if price is None else price.id,
            "usd_per_gpu_hour": None if price is None else price.usd_per_gpu_hour,
            "price_provider": None if price is None else price.provider,
            "price_as_of": None if price is None else price.as_of,
            "price_confidence": None if price is None else price.confidence,
            "market_usd_per_gpu_hour": None if price is None else price.market_usd_per_gpu_hour,
            "market_usd_per_million_accepted": _rounded(self.market_usd_per_million_accepted),
            "result_ids": [point.result_id],
            "evidence": {
                "lane": point.lane,
                "result_id": point.result_id,
                "point_index": point.point_index,
                "load": point.load,
                "basis": self.acceptance.basis,
                "derived": self.acceptance.derived,
                "source_url": point.source_url,
                "mlperf_result_id": point.mlperf_result_id,
            },
        }


@dataclass(frozen=True)
class Answer:
    """One homogeneous ranking (model × workload × precision × scenario × lane)."""

    question: Question
    workload_key: str
    workload: str
    precision: str
    scenario: str
    lane: str
    rows: tuple[Row, ...]
    nearest_miss: tuple[Point, Miss] | None = None
    break_even_usd_per_gpu_hour: float | None = None  # set when the winner's price is low
    estimate: Estimate | None = None
    unpriced: tuple[Row, ...] = field(default=())
    no_estimate: str | None = None  # why there is no estimate (`NoEstimate.reason`)
    size: int = 1  # the group's points

    @property
    def miss_measured(self) -> bool:
        """Whether its nearest miss missed by a figure; else no point of the group has one, and
        the one shown is only one of them (`miss_heading`)."""
        return self.nearest_miss is not None and self.nearest_miss[1].ratio is not None

    def as_dict(self) -> dict[str, Any]:
        question = self.question
        miss = None
        if self.nearest_miss is not None:
            point, why = self.nearest_miss
            miss = {
                "gpu": point.gpu,
                "gpu_count": point.gpu_count,
                "result_id": point.result_id,
                "load": point.load,
                "reason": why.reason,
                "metric": why.metric,
                "measured_ms": why.measured_ms,
                "bound_ms": why.bound_ms,
                "measured": self.miss_measured,
            }
        return {
            "model": question.model,
            "workload_key": self.workload_key,
            "workload": self.workload,
            "precision": self.precision,
            "scenario": self.scenario,
            "lane": self.lane,
            "slo": question.slo.as_dict(),
            "tier": question.tier,
            "rows": [row.as_dict() for row in self.rows],
            "unpriced_rows": [row.as_dict() for row in self.unpriced],
            "winner_price_low_confidence": self.break_even_usd_per_gpu_hour is not None,
            "break_even_usd_per_gpu_hour": _rounded(self.break_even_usd_per_gpu_hour),
            "nearest_miss": miss,
            "estimate": None if self.estimate is None else self.estimate.as_dict(),
            "no_estimate": self.no_estimate,
            "group_points": self.size,
        }


def miss_heading(found: Answer) -> str:
    """What introduces a group's nearest miss: "nearest miss" where it missed by a figure; else
    that no point has a figure to hold against the bounds (the one shown is one of them)."""
    if found.miss_measured:
        return "nearest miss"
    if found.size == 1:
        return "its one point has no figure to hold against these bounds"
    return f"none of its {found.size:,} points has a figure to hold against these bounds; one"


def _rounded(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")


def answer_key(point: Point) -> tuple[str, str, str, str, str]:
    """What one answer is homogeneous in, after the model: workload, precision, scenario, lane."""
    return (point.workload_key, point.precision, point.scenario, point.lane, point.workload)


def cheapest_price(prices: Iterable[Price], gpu: str, tier: str) -> Price | None:
    """The GPU's cheapest price of the tier (ties: the id that sorts first)."""
    return min(
        (p for p in prices if p.gpu == gpu and p.tier == tier),
        key=lambda p: (p.usd_per_gpu_hour, p.id),
        default=None,
    )


def _best_rows(
    points: Sequence[Point], slo: Slo
) -> dict[tuple[str, int], tuple[Point, Acceptance]]:
    best: dict[tuple[str, int], tuple[Point, Acceptance]] = {}
    for point in points:
        acceptance = accept(point, slo)
        tokens = acceptance.accepted_tokens_per_s
        if tokens is None:
            continue
        key = (point.gpu, point.gpu_count)
        held = best.get(key)
        if held is None or tokens > (held[1].accepted_tokens_per_s or 0.0):
            best[key] = (point, acceptance)
    return best


def nearest_miss(points: Iterable[Point], slo: Slo) -> tuple[Point, Miss] | None:
    """The point that missed `slo` by the least (measured ÷ bound); one with no figure to show
    only where none has one."""
    misses = [(p, a.miss) for p in points if (a := accept(p, slo)).miss is not None]
    if not misses:
        return None
    measured = [(p, m) for p, m in misses if m is not None and m.ratio is not None]
    pool = measured or misses
    chosen = min(pool, key=lambda pm: (pm[1].ratio or 0.0, pm[0].result_id, pm[0].point_index))
    return chosen[0], chosen[1]


def break_even(rows: Sequence[Row]) -> float | None:
    """Where the winner's price is low-confidence: its price per GPU-hour at which the
    runner-up's $/1M accepted would equal it (above it, the runner-up wins)."""
    if len(rows) < 2 or rows[0].price is None or rows[0].price.confidence != LOW_CONFIDENCE:
        return None
    winner, runner_up = rows[0], rows[1]
    tokens = winner.acceptance.accepted_tokens_per_s or 0.0
    usd = runner_up.usd_per_million_accepted or 0.0
    return usd_per_hour_at(usd, tokens) / winner.point.gpu_count


def rank(points: Sequence[Point], prices: Sequence[Price], slo: Slo, tier: str) -> list[Row]:
    """Each deployment's best qualifying point, priced, cheapest first; unpriced ones last."""
    rows = []
    for (gpu, count), (point, acceptance) in _best_rows(points, slo).items():
        price = cheapest_price(prices, gpu, tier)
        tokens = acceptance.accepted_tokens_per_s or 0.0
        usd = (
            None
            if price is None
            else usd_per_million_tokens(price.usd_per_gpu_hour * count, tokens)
        )
        rows.append(Row(point, acceptance, price, usd))
    rows.sort(
        key=lambda r: (
            r.usd_per_million_accepted is None,
            r.usd_per_million_accepted or 0.0,
            r.point.gpu,
            r.point.gpu_count,
        )
    )
    winner = rows[0].usd_per_million_accepted if rows else None
    return [
        Row(
            r.point,
            r.acceptance,
            r.price,
            r.usd_per_million_accepted,
            None
            if winner is None or r.usd_per_million_accepted is None
            else r.usd_per_million_accepted / winner,
        )
        for r in rows
    ]


def answer(
    points: Iterable[Point],
    prices: Sequence[Price],
    question: Question,
    estimator: Estimator | None = None,
) -> list[Answer]:
    """Every homogeneous answer to `question` (module docstring), in a stable order: those
    with rows first, then the misses; for a model without results, its estimate alone."""
    points = list(points)
    groups: dict[tuple[str, str, str, str, str], list[Point]] = {}
    for point in points:
        if point.model != question.model:
            continue
        if question.workload_key is not None and point.workload_key != question.workload_key:
            continue
        if question.precision is not None and point.precision != question.precision:
            continue
        groups.setdefault(answer_key(point), []).append(point)
    answers = []
    for (workload_key, precision, scenario, lane, workload), members in sorted(groups.items()):
        ranked = rank(members, prices, question.slo, question.tier)
        priced = tuple(r for r in ranked if r.usd_per_million_accepted is not None)
        unpriced = tuple(r for r in ranked if r.usd_per_million_accepted is None)
        miss = None if ranked else nearest_miss(members, question.slo)
        found = (
            estimator(question, workload_key, precision)
            if not ranked and estimator is not None
            else None
        )
        refused = found.reason if isinstance(found, NoEstimate) else None
        answers.append(
            Answer(
                question,
                workload_key,
                workload,
                precision,
                scenario,
                lane,
                priced,
                miss,
                break_even(priced),
                found if isinstance(found, Estimate) else None,
                unpriced,
                refused,
                len(members),
            )
        )
    answers.sort(key=lambda a: (not a.rows, not a.unpriced))
    if not any(p.model == question.model for p in points):
        return _estimate_only(points, question, estimator)
    return answers


# The lane of an answer about a model no result measured: its estimate alone (`_estimate_only`).
NO_RESULT_LANE = "none"


def no_result_heading(found: Answer) -> str:
    """What an answer in `NO_RESULT_LANE` says in place of its scenario and lane."""
    return f"no result measures {found.question.model} yet: an estimate only"


def _estimate_only(
    points: Iterable[Point], question: Question, estimator: Estimator | None
) -> list[Answer]:
    """A model without results (its workload and precision resolved, `answer_question`): the
    estimate at them alone (none where no `estimator` is given), in a group of no points;
    nothing where there is nothing to ask."""
    labels = {p.workload_key: p.workload for p in points}
    key, precision = question.workload_key, question.precision
    if key not in labels or precision is None:
        return []
    found = None if estimator is None else estimator(question, key, precision)
    return [
        Answer(
            question,
            key,
            labels[key],
            precision,
            estimate_kind(question.slo),
            NO_RESULT_LANE,
            (),
            estimate=found if isinstance(found, Estimate) else None,
            no_estimate=found.reason if isinstance(found, NoEstimate) else None,
            size=0,
        )
    ]


def points_from_json(data: Iterable[Mapping[str, Any]]) -> list[Point]:
    """Points from their JSON form (`Point.as_dict`), as the browser reads them."""
    return [Point.from_dict(item) for item in data]


def prices_from_json(data: Iterable[Mapping[str, Any]]) -> list[Price]:
    return [Price(**item) for item in data]


@dataclass(frozen=True)
class Preset:
    """A common question, pre-rendered on the site: its SLO, the workloads it asks about
    (typical prompt at least `min_input_tokens`) and why these bounds (`why`: the reasons only;
    the bounds are the SLO's `text()`, which every page shows beside it)."""

    id: str
    title: str
    slo: Slo
    min_input_tokens: int
    why: str
    datasets: tuple[str, ...] = ()  # data sets it asks about whatever their stated lengths

    def fits(self, point: Point) -> bool:
        """Whether the point's workload is one this preset asks about."""
        if self.min_input_tokens == 0:
            return True
        if any(point.workload.endswith(f", {name}") for name in self.datasets):
            return True
        return point.input_tokens is not None and point.input_tokens >= self.min_input_tokens


PRESETS: tuple[Preset, ...] = (
    Preset(
        "interactive-chat",
        "Interactive chat",
        Slo(99.0, ttft_ms=500.0, tpot_ms=40.0),
        0,
        "25 tokens/s per user: MLPerf Interactive's bounds (Llama 2 70B: 450 ms and 40 ms; "
        "Llama 3.1 8B: 500 ms and 30 ms), rounded to the looser, so those points answer it.",
    ),
    Preset(
        "balanced-chat",
        "Balanced chat",
        Slo(99.0, ttft_ms=2000.0, tpot_ms=200.0),
        0,
        "5 tokens/s per user, about reading speed: MLPerf Server's bounds for Llama 2 70B.",
    ),
    Preset(
        "long-context-rag",
        "Long-context RAG",
        Slo(99.0, ttft_ms=6000.0, tpot_ms=175.0),
        2000,
        "Prompts of 2,000 tokens or more, and MLPerf's Llama 3.1 405B data set (long-context "
        "tasks); MLPerf Server's bounds for that benchmark, looser on TTFT because long prompts "
        "take long to prefill.",
        ("MLPerf Inference llama3.1-405b data set",),
    ),
    Preset(
        "batch",
        "Batch (no latency bound)",
        Slo(),
        0,
        "Jobs can wait, so every output token counts; the offline maximum throughput answers it.",
    ),
)
