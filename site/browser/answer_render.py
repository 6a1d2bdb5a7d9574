"""The answer page's Python: a question from the URL query, the answers from
`calculators.answer`, and their HTML. The same module runs at build time (the pre-rendered
presets, Home) and in the browser (the Pyodide worker loads the evidence, `data/evidence.json`,
and calls `render_json`), so the page and the CLI rank with one piece of code.

Stdlib and `calculators` only. Strings from result files are HTML-escaped. A ranked row carries
`data-answer-row` and its $ cell `data-output="usd_per_million_accepted"` with the raw number in
`data-value`; a question nothing answers carries `data-nearest-miss`; each other group nothing
meets is a `data-missed-group` row of one table, `data-estimate` where it has an estimate. A
preset page's summary (`winners_html`) is a `data-answer` row per ranking, its winner's $ cell
marked as a ranked row's is.
"""

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from calc_compute import catalog_gpu
from price_links import price_href

from infermeter.calculators.accepted import METRIC_NAMES, METRICS, Point, Slo
from infermeter.calculators.answer import (
    NO_RESULT_LANE,
    Answer,
    Estimate,
    NoEstimate,
    Price,
    Question,
    Row,
    answer,
    estimate_kind,
    estimate_phrase,
    miss_heading,
    no_result_heading,
    points_from_json,
    prices_from_json,
)
from infermeter.calculators.answer_estimate import (
    AnswerEstimator,
    EstimateGpu,
    most_memory_bytes,
    workload_tokens_of,
)
from infermeter.calculators.answer_question import (
    question_problems,
    resolve_catalog_only,
    resolve_workload,
)
from infermeter.calculators.fields import Field, FieldError, read_field
from infermeter.calculators.inputs import ANSWER
from infermeter.calculators.perf_fit import HELD_OUT
from infermeter.calculators.perf_labels import HeldOut

SCENARIO_NAMES = {
    "offline": "offline (maximum throughput)",
    "mlperf_server": "MLPerf Server",
    "mlperf_interactive": "MLPerf Interactive",
    "server_at_slo": "server at an SLO",
    "static_batch": "static batch",
    "closed": "closed loop",
    "open": "open loop",
}
LANE_NAMES = {
    "measured": "measured",
    "reported": "reported",
    "mlperf": "MLPerf",
    "mlperf-open": "MLPerf open division",
}
MLPERF_NOTE = (
    "MLPerf results stay in their own lane, never ranked against other rows; each shows its "
    "result ID, and its result page the footnote MLPerf's guidelines require. The $ figure is "
    "derived by infermeter from catalog prices, not verified by MLCommons."
)


@dataclass(frozen=True)
class Data:
    """What answers are computed from, as the site publishes it (`data/evidence.json`)."""

    points: list[Point]
    prices: list[Price]
    models: Mapping[str, str]  # id → name
    gpus: Mapping[str, str]  # id → name
    # (model, workload key, precision, tier, kind) → the estimate where nothing qualifies (or why
    # there is none), for each kind of question (`estimate_kind`) whose estimate is the same at
    # every SLO
    estimates: Mapping[tuple[str, str, str, str, str], Estimate | NoEstimate]
    held_out: HeldOut = field(default_factory=lambda: HELD_OUT)  # the predictor's error table
    # the estimator itself, for a kind whose estimate depends on the SLO (a prediction at it)
    predictor: AnswerEstimator | None = field(default=None, compare=False)

    @classmethod
    def from_json(cls, text: str, catalog: Mapping[str, Any] | None = None) -> "Data":
        """The published evidence; with the calculators' `catalog` (`assets/catalog.json`),
        the estimator that predicts at the reader's SLO, as the build's would."""
        data = json.loads(text)
        missed = data["missed_targets"]
        estimates: dict[tuple[str, str, str, str, str], Estimate | NoEstimate] = {
            (
                item["model"],
                item["workload_key"],
                item["question_precision"],
                item["tier"],
                kind,
            ): Estimate(**item["estimate"], missed_target=None if at is None else missed[at])
            for item in data["estimates"]
            for kind, at in item["kinds"].items()
        }
        estimates |= {
            (item["model"], item["workload_key"], item["question_precision"], item["tier"], kind): (
                NoEstimate(item["reason"])
            )
            for item in data["no_estimates"]
            for kind in item["kinds"]
        }
        points, prices = points_from_json(data["points"]), prices_from_json(data["prices"])
        held_out = data["held_out"]
        predictor = (
            None if catalog is None else catalog_estimator(catalog, points, prices, held_out)
        )
        return cls(points, prices, data["models"], data["gpus"], estimates, held_out, predictor)

    def estimator(
        self, question: Question, workload_key: str, precision: str
    ) -> Estimate | NoEstimate | None:
        """The estimate for a group nothing qualifies for (`calculators.answer`'s seam): the
        published one (the build worked it out with the registry's estimator) where the kind's
        estimate is the same at every SLO, else the estimator's at the question's SLO."""
        kind = estimate_kind(question.slo)
        predictor = self.predictor
        if predictor is not None and not predictor.slo_independent(kind):
            return predictor(question, workload_key, precision)
        found = self.estimates.get((question.model, workload_key, precision, question.tier, kind))
        # none published for a model without results (its model page's example aside): the
        # estimator's, as the CLI's
        measured = any(p.model == question.model for p in self.points)
        if found is None and predictor is not None and not measured:
            return predictor(question, workload_key, precision)
        return found

    @property
    def configs(self) -> Mapping[str, Mapping[str, Any]]:
        """The catalog models' configs the estimator reads (each may be asked for its
        estimate); none without the calculators' catalog."""
        return {} if self.predictor is None else self.predictor.configs


def estimate_gpu(gpu_id: str, entry: Mapping[str, Any]) -> EstimateGpu:
    """A GPU of the calculators' catalog (`assets/catalog.json`) as the estimate reads it."""
    return EstimateGpu(
        catalog_gpu(gpu_id, entry),
        most_memory_bytes(entry["memory_gb"], entry["memory_reported_mib"]),
    )


def catalog_estimator(
    catalog: Mapping[str, Any], points: Sequence[Point], prices: Sequence[Price], held_out: HeldOut
) -> AnswerEstimator:
    """The answers' estimator over the calculators' catalog and the published evidence."""
    return AnswerEstimator(
        {model_id: model["config"] for model_id, model in catalog["models"].items()},
        {gpu_id: estimate_gpu(gpu_id, entry) for gpu_id, entry in catalog["gpus"].items()},
        prices,
        workload_tokens_of(points),
        held_out,
    )


def evidence_json(data: Data) -> str:
    """`data/evidence.json`'s text (compact: the browser downloads it). An estimate the same
    for several kinds of question (a bound) is written once, its `kinds` mapping each kind to
    the target it missed (an index into `missed_targets`, each text written once; null for a
    prediction)."""
    missed: dict[str, int] = {}
    grouped: dict[tuple[tuple[str, str, str, str], str], dict[str, Any]] = {}
    for (model, workload_key, precision, tier, kind), estimate in sorted(data.estimates.items()):
        if isinstance(estimate, NoEstimate):
            continue  # in `no_estimates`
        shared = estimate.as_dict()
        text = shared.pop("missed_target")
        item = grouped.setdefault(
            ((model, workload_key, precision, tier), json.dumps(shared, sort_keys=True)),
            {
                "model": model,
                "workload_key": workload_key,
                "question_precision": precision,
                "tier": tier,
                "kinds": {},
                "estimate": shared,
            },
        )
        item["kinds"][kind] = None if text is None else missed.setdefault(text, len(missed))
    return json.dumps(
        {
            "points": [point.as_dict() for point in data.points],
            "prices": [price.as_dict() for price in data.prices],
            "models": dict(sorted(data.models.items())),
            "gpus": dict(sorted(data.gpus.items())),
            "missed_targets": list(missed),
            "estimates": list(grouped.values()),
            "no_estimates": _no_estimates_json(data.estimates),
            "held_out": data.held_out,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


def _no_estimates_json(
    estimates: Mapping[tuple[str, str, str, str, str], Estimate | NoEstimate],
) -> list[dict[str, Any]]:
    """Why a group has no estimate (`NoEstimate`), once per model, workload, precision and tier
    with the kinds of question it holds for."""
    grouped: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for (model, workload_key, precision, tier, kind), found in sorted(estimates.items()):
        if not isinstance(found, NoEstimate):
            continue
        item = grouped.setdefault(
            (model, workload_key, precision, tier),
            {
                "model": model,
                "workload_key": workload_key,
                "question_precision": precision,
                "tier": tier,
                "kinds": [],
                "reason": found.reason,
            },
        )
        item["kinds"].append(kind)
    return list(grouped.values())


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _read(query: Mapping[str, str], field: Field, errors: dict[str, str]) -> Any:
    """The field's value in the query by its one rule (`read_field`, the CLI's too), or None
    with its message in `errors`."""
    try:
        return read_field(field, query.get(field.name) or "")
    except FieldError as error:
        errors[field.name] = error.message
        return None


def parse_question(query: Mapping[str, str], data: Data) -> Question | dict[str, str]:
    """The question in the query (its keys: `ANSWER`'s names), or {field: message} for each bad
    field: by the rules `registry answer` reads its options with (each input's range, then
    `question_problems`)."""
    errors: dict[str, str] = {}
    given = {field.name: _read(query, field, errors) for field in ANSWER}
    model = given["model"] or ""
    workload = resolve_workload(data.points, model, given["workload"])
    named = resolve_catalog_only(
        Question(model, Slo(), given["tier"], workload, given["precision"]),
        data.points,
        data.configs,
    )
    for name, reason in question_problems(named, data.points, data.prices, data.configs).items():
        errors[name] = f"{name}: {reason}"
    if errors:
        return errors
    return replace(named, slo=Slo(*(given[name] for name in ("percentile", *METRICS))))


def usd(value: float | None) -> str:
    if value is None:
        return "–"
    return f"${value:,.3f}" if value >= 0.01 else f"${value:,.4f}"


def gpus_text(count: int, gpu: str, names: Mapping[str, str]) -> str:
    return f"{count} × {names.get(gpu, gpu)}"


def _price_cell(price: Price | None, base: str, market: str = "") -> str:
    """A row's price, linked to its row on the GPU page, with what the market asks where the
    price is well above it (`market`: `Row.market_text`)."""
    if price is None:
        return "no price"
    confidence = price.confidence or "not stated"
    flag = ' class="im-low"' if price.confidence == "low" else ""
    # the price links to its row on the GPU's page (its source and conditions are there)
    return (
        f'<a href="{esc(price_href(price.gpu, price.id, base + "gpus/"))}" title="{esc(price.id)}">'
        f"${price.usd_per_gpu_hour:,.2f}/GPU-h</a> · {esc(price.provider)} · "
        f"{esc(price.tier.replace('_', '-'))} · {esc(price.as_of)} · "
        f"<span{flag}>confidence {esc(confidence)}</span>"
        + (f" · <span data-market>{_market_html(price, market, base)}</span>" if market else "")
    )


def _market_html(price: Price, market: str, base: str) -> str:
    """`market` (`Row.market_text`) with its price linked to its row on the GPU's page, as
    every price of an answer is."""
    shown = esc(price.market_price_text)
    href = price_href(price.gpu, price.market_price_id or "", base + "gpus/")
    link = f'<a href="{esc(href)}">{shown}</a>'
    return esc(market).replace(shown, link, 1)


def _evidence_cell(row: Row, base: str) -> str:
    point = row.point
    mlperf = (
        f" · MLPerf {esc(point.mlperf_result_id)}" if point.mlperf_result_id is not None else ""
    )
    derived = " · derived" if row.acceptance.derived else ""
    source = (
        f' · <a href="{esc(point.source_url)}" rel="nofollow">source</a>'
        if point.source_url and point.source_url.startswith("https://")
        else ""
    )
    return (
        f'<a href="{base}results/{esc(point.result_id)}/">result {esc(point.result_id)}</a>'
        f"{mlperf}{source} · {esc(point.load)}{derived}"
        f"<br><small>{esc(row.acceptance.basis)}</small>"
    )


def _row_html(row: Row, base: str, names: Mapping[str, str]) -> str:
    point, value = row.point, row.usd_per_million_accepted
    ratio = "–" if row.ratio_to_winner is None else f"×{row.ratio_to_winner:.2f}"
    data_value = "" if value is None else f' data-value="{value!r}"'
    return (
        f'<tr data-answer-row data-gpu="{esc(point.gpu)}" data-gpu-count="{point.gpu_count}">'
        f'<td><a href="{base}gpus/{esc(point.gpu)}/" title="{esc(point.gpu)}">'
        f"{esc(gpus_text(point.gpu_count, point.gpu, names))}</a></td>"
        f'<td data-output="usd_per_million_accepted"{data_value}>{usd(value)}</td>'
        f"<td>{ratio}</td>"
        f"<td>{row.acceptance.accepted_tokens_per_s or 0:,.0f}</td>"
        f"<td>{_price_cell(row.price, base, row.market_text)}</td>"
        f"<td>{_evidence_cell(row, base)}</td></tr>"
    )


def answer_title(found: Answer) -> str:
    kind = (
        no_result_heading(found)
        if found.lane == NO_RESULT_LANE
        else f"{SCENARIO_NAMES.get(found.scenario, found.scenario)} · "
        f"{LANE_NAMES.get(found.lane, found.lane)} lane"
    )
    return f"{found.workload} · {found.precision} weights · {kind}"


def _miss_text(found: Answer, names: Mapping[str, str], short: bool = False) -> str:
    """The group's nearest miss: "nearest miss: <GPUs> at <load>: <reason> (<figures>)", or
    without its "nearest miss: " where a column heading says it (`short`); where no point has a
    figure, that (`miss_heading`) and one of them."""
    if found.lane == NO_RESULT_LANE:
        return "no result to miss by"
    if found.nearest_miss is None:
        return "no point states what this question needs"
    point, miss = found.nearest_miss
    figures = (
        ""
        if miss.measured_ms is None or miss.bound_ms is None
        else f" ({METRIC_NAMES.get(miss.metric or '', '')} {miss.measured_ms:,.0f} ms against "
        f"the bound of {miss.bound_ms:,.0f} ms)"
    )
    heading = "" if short and found.miss_measured else f"{miss_heading(found)}: "
    return (
        f"{heading}{gpus_text(point.gpu_count, point.gpu, names)} at "
        f"{point.load}: {miss.reason}{figures}"
    )


def _group_miss_text(found: Answer, names: Mapping[str, str]) -> str:
    """The evidence group nothing there meets, then its nearest miss."""
    return f"{answer_title(found)}: {_miss_text(found, names)}"


def estimate_paragraph(estimate: Estimate | None, names: Mapping[str, str]) -> str:
    """An estimate, labelled as what it is (the answer page, presets and model pages alike)."""
    if estimate is None:
        return ""
    value = estimate.usd_per_million_output_tokens
    return (
        f'<p class="im-estimate" data-estimate data-value="{value!r}" '
        f'data-kind="{esc(estimate.kind)}" data-precision="{esc(estimate.precision)}" '
        f'data-tier="{esc(estimate.tier)}" data-price-id="{esc(estimate.price_id)}">'
        f"Estimate, not a measurement ({esc(estimate.kind)}, {esc(estimate.precision)} weights): "
        f"{estimate_phrase(estimate)} {usd(estimate.usd_per_million_output_tokens)}/1M output "
        "tokens on "
        f"{esc(gpus_text(estimate.gpu_count, estimate.gpu, names))} at "
        f"${estimate.usd_per_gpu_hour:,.2f}/GPU-h ({esc(estimate.tier.replace('_', '-'))} "
        f"price {esc(estimate.price_id)}), {esc(estimate.full_note)}.</p>"
    )


def estimate_html(found: Answer, names: Mapping[str, str]) -> str:
    """The estimate beside an answer nothing qualifies for, or why there is none."""
    if found.no_estimate is not None:
        return (
            f'<p class="im-no-estimate" data-no-estimate>No estimate: {esc(found.no_estimate)}</p>'
        )
    return estimate_paragraph(found.estimate, names)


def no_result_html(found: Answer, names: Mapping[str, str]) -> str:
    """The answer about a model no result measures (`NO_RESULT_LANE`): that, and its estimate
    at the workload and weights it was planned for (or why there is none)."""
    return (
        f'<div class="im-no-answer" data-no-result><p><strong>No result measures this model '
        f"yet.</strong> The estimate for {esc(found.workload)} at {esc(found.precision)} "
        "weights (pick another workload or precision above):</p>"
        f"{estimate_html(found, names)}</div>"
    )


def mlperf_note(answers: Sequence[Answer]) -> str:
    """MLPerf's note, once under answers where one is in MLPerf's lane ("" else)."""
    if not any(found.lane.startswith("mlperf") for found in answers):
        return ""
    return f'<p class="im-mlperf"><small>{esc(MLPERF_NOTE)}</small></p>'


def ranking_html(
    found: Answer, base: str, names: Mapping[str, str], limit: int | None = None
) -> str:
    """One homogeneous answer: its title, SLO, ranked rows (the first `limit`) and notes
    (MLPerf's is its list's, once under them: `mlperf_note`)."""
    rows = list(found.rows) + list(found.unpriced)
    shown = rows if limit is None else rows[:limit]
    body = "".join(_row_html(row, base, names) for row in shown)
    notes = []
    if found.break_even_usd_per_gpu_hour is not None and found.rows:
        winner = found.rows[0]
        notes.append(
            '<p class="im-low-confidence" data-low-confidence>The winner rests on a '
            f"low-confidence price ({esc(winner.price.id if winner.price else '')}): above "
            f"${found.break_even_usd_per_gpu_hour:,.2f} per GPU-hour the runner-up would win.</p>"
        )
    if limit is not None and len(rows) > limit:
        notes.append(f"<p>{len(rows) - limit} more deployment(s) in the full ranking.</p>")
    return (
        f'<section class="im-ranking" data-answer data-scenario="{esc(found.scenario)}" '
        f'data-lane="{esc(found.lane)}" data-precision="{esc(found.precision)}" '
        f'data-workload-key="{esc(found.workload_key)}">'
        # a title, not a heading: a heading per ranking would be a search entry each
        f'<p class="im-ranking-title"><strong>{esc(answer_title(found))}</strong></p>'
        '<div class="im-scroll"><table class="im-table im-answer-ranking" data-search-exclude>'
        "<thead><tr><th>GPUs</th><th>$/1M accepted</th><th>vs winner</th>"
        "<th>Accepted tok/s</th><th>Price</th><th>Evidence</th></tr></thead>"
        f"<tbody>{body}</tbody></table></div>{''.join(notes)}</section>"
    )


def _winner_row(found: Answer, base: str, names: Mapping[str, str], basis: bool) -> str:
    """A ranking as one row: its title, its cheapest deployment's figures, price and evidence
    (with why it qualifies where `basis`), and what the next costs against it."""
    winner, rest = found.rows[0], [*found.rows[1:], *found.unpriced]
    point, value = winner.point, winner.usd_per_million_accepted
    runner = found.rows[1] if len(found.rows) > 1 else None
    low = (
        ""
        if found.break_even_usd_per_gpu_hour is None
        else f'<br><small class="im-low" data-low-confidence>above '
        f"${found.break_even_usd_per_gpu_hour:,.2f} per GPU-hour the runner-up wins</small>"
    )
    nxt = (
        "none"
        if not rest
        else f"{esc(gpus_text(rest[0].point.gpu_count, rest[0].point.gpu, names))} "
        + ("unpriced" if runner is None else f"×{runner.ratio_to_winner or 0:.2f}")
        + (f" · {len(rest) - 1} more" if len(rest) > 1 else "")
    )
    return (
        f'<tr data-answer data-scenario="{esc(found.scenario)}" data-lane="{esc(found.lane)}" '
        f'data-precision="{esc(found.precision)}" data-workload-key="{esc(found.workload_key)}" '
        f'data-gpu="{esc(point.gpu)}" data-gpu-count="{point.gpu_count}">'
        f"<td>{esc(answer_title(found))}</td>"
        # the $ beside the ranking's title: a phone shows both without scrolling
        f'<td data-output="usd_per_million_accepted" data-value="{value!r}">{usd(value)}</td>'
        f'<td><a href="{base}gpus/{esc(point.gpu)}/">'
        f"{esc(gpus_text(point.gpu_count, point.gpu, names))}</a></td>"
        f"<td>{winner.acceptance.accepted_tokens_per_s or 0:,.0f}</td>"
        f"<td>{_price_cell(winner.price, base, winner.market_text)}{low}</td>"
        f'<td><a href="{base}results/{esc(point.result_id)}/">result {esc(point.result_id)}</a>'
        + (f" · MLPerf {esc(point.mlperf_result_id)}" if point.mlperf_result_id else "")
        + f" · {esc(point.load)}"
        + (" · derived" if winner.acceptance.derived else "")
        + (f"<br><small>{esc(winner.acceptance.basis)}</small>" if basis else "")
        + f"</td><td>{nxt}</td></tr>"
    )


def winners_html(answers: Sequence[Answer], base: str, names: Mapping[str, str]) -> str:
    """The rankings of one question that something meets, a row each: its cheapest deployment
    (a preset page's summary; each ranking's three cheapest are on the model's page, every
    deployment on the answer page); why they qualify once under them where every row's reason
    is the same (batch: no latency bound), and MLPerf's note where one is MLPerf's."""
    ranked = [found for found in answers if found.rows]
    bases = {found.rows[0].acceptance.basis for found in ranked}
    shared = next(iter(bases)) if len(bases) == 1 else None
    rows = "".join(_winner_row(found, base, names, shared is None) for found in ranked)
    notes = f"<p><small>Every row: {esc(shared)}.</small></p>" if shared else ""
    notes += mlperf_note(ranked)
    return (
        '<div class="im-scroll"><table class="im-table im-answer-winners" data-search-exclude>'
        "<thead><tr><th>Ranking</th><th>$/1M accepted</th><th>Cheapest</th>"
        "<th>Accepted tok/s</th><th>Price</th><th>Evidence</th><th>Next cheapest</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></div>{notes}"
    )


def answers_html(
    answers: Sequence[Answer],
    slo: Slo,
    base: str,
    names: Mapping[str, str],
    limit: int | None = None,
) -> str:
    """Every answer to one question: the rankings, then what nothing qualifies for."""
    ranked = [a for a in answers if a.rows or a.unpriced]
    missed = [a for a in answers if not (a.rows or a.unpriced)]
    parts = [f'<p class="im-slo" data-slo>SLO: {esc(slo.text())}</p>']
    if [a.lane for a in answers] == [NO_RESULT_LANE]:
        return parts[0] + no_result_html(answers[0], names)
    if not ranked:
        nearest = _nearest_overall(missed)
        parts.append(
            f'<div class="im-no-answer" data-nearest-miss><p><strong>No result meets this.'
            f"</strong> {esc(_group_miss_text(nearest, names)) if nearest else ''}</p>"
            f"{estimate_html(nearest, names) if nearest else ''}</div>"
        )
        # the other groups, each with its own nearest miss and estimate, as the CLI lists them
        # (a cut answer, `limit`, links to the full one instead)
        missed = [a for a in missed if a is not nearest and limit is None]
    parts += [ranking_html(found, base, names, limit) for found in ranked]
    parts.append(mlperf_note(ranked))
    if missed:
        parts.append(
            f"<details><summary>{len(missed)} more evidence group(s) nothing there meets"
            f"</summary>{missed_table_html(missed, base, names)}</details>"
        )
    return "".join(parts)


def missed_table_html(missed: Sequence[Answer], base: str, names: Mapping[str, str]) -> str:
    """The groups nothing meets as one table, a row each: its title, its nearest miss and its
    estimate's own facts (or why there is none); what their estimates say alike (a bound's
    meaning, the target the prediction missed) once under it, each text marked (1), (2)… on
    its rows where they differ."""
    estimates = [a.estimate for a in missed if a.no_estimate is None and a.estimate is not None]
    said = list(dict.fromkeys(estimate.shared_note for estimate in estimates))
    # marked where not every estimate says the same (a prediction says nothing shared)
    shared = [text for text in said if text] if len(said) > 1 else []
    rows = "".join(_missed_row(found, base, names, shared) for found in missed)
    tiers = sorted({estimate.tier.replace("_", "-") for estimate in estimates})
    notes = "".join(
        f'<p class="im-estimate-shared" data-estimate-shared><small>'
        f"{_mark(text, shared) or 'Every estimate above: '}{esc(text)}.</small></p>"
        for text in said
        if text
    ) + (f"<p><small>Prices: {esc(', '.join(tiers))} tier.</small></p>" if tiers else "")
    return (
        '<div class="im-scroll"><table class="im-table im-missed" data-search-exclude>'
        "<thead><tr><th>Evidence group</th><th>Nearest miss</th>"
        "<th>Estimate, not a measurement: $/1M output</th><th>On</th><th>Kind</th>"
        f"</tr></thead><tbody>{rows}</tbody></table></div>{notes}"
    )


def _mark(text: str, shared: Sequence[str]) -> str:
    """A shared text's mark, "(n) ", where `shared` lists the texts marked ("" else)."""
    return f"({shared.index(text) + 1}) " if text in shared else ""


def _missed_row(found: Answer, base: str, names: Mapping[str, str], shared: Sequence[str]) -> str:
    """A group nothing meets: its title, nearest miss, and its estimate or why there is none."""
    miss = _miss_text(found, names, short=True)
    head = f"<td>{esc(answer_title(found))}</td><td>{esc(miss)}</td>"
    estimate = found.estimate
    if found.no_estimate is not None or estimate is None:
        why = (
            ""
            if found.no_estimate is None
            else f'<span class="im-no-estimate" data-no-estimate>'
            f"No estimate: {esc(found.no_estimate)}</span>"
        )
        return f'<tr data-missed-group>{head}<td colspan="3">{why}</td></tr>'
    value = estimate.usd_per_million_output_tokens
    mark = _mark(estimate.shared_note, shared)
    return (
        # the row is the estimate (`data-estimate`): its text holds the figure's every fact
        f'<tr data-missed-group data-estimate data-value="{value!r}" '
        f'data-kind="{esc(estimate.kind)}" data-precision="{esc(estimate.precision)}" '
        f'data-tier="{esc(estimate.tier)}" data-price-id="{esc(estimate.price_id)}">{head}'
        f'<td class="im-estimate-cell">{estimate_phrase(estimate)} {usd(value)}</td>'
        f"<td>{esc(gpus_text(estimate.gpu_count, estimate.gpu, names))} at "
        # the price links to its row on the GPU's page, as a ranking's does; its tier (the
        # question's) is said under the table
        f'<a href="{esc(price_href(estimate.gpu, estimate.price_id, base + "gpus/"))}" '
        f'title="{esc(estimate.tier.replace("_", "-"))} price {esc(estimate.price_id)}">'
        f"${estimate.usd_per_gpu_hour:,.2f}/GPU-h</a></td>"
        f"<td>{esc(estimate.note)}{' ' + mark.strip() if mark else ''}</td>"
        "</tr>"
    )


def _nearest_overall(missed: Sequence[Answer]) -> Answer | None:
    with_miss = [a for a in missed if a.nearest_miss is not None]
    if not with_miss:
        return missed[0] if missed else None

    def closeness(found: Answer) -> tuple[bool, float]:
        ratio = found.nearest_miss[1].ratio if found.nearest_miss else None
        return ratio is None, ratio or 0.0

    return min(with_miss, key=closeness)


def render(query: Mapping[str, str], data: Data, base: str = "../") -> dict[str, Any]:
    """What the page shows: {"errors": {...}} or {"html": …, "payload": answers as JSON data}."""
    question = parse_question(query, data)
    if isinstance(question, dict):
        return {"errors": question}
    answers = answer(data.points, data.prices, question, data.estimator)
    body = answers_html(answers, question.slo, base, data.gpus)
    heading = f"<h3>{esc(data.models.get(question.model, question.model))}</h3>"
    return {
        "html": heading + body,
        "payload": {"answers": [found.as_dict() for found in answers]},
    }


_loaded: dict[str, Data] = {}


def load(text: str, catalog: Mapping[str, Any] | None = None) -> None:
    """The worker hands the published evidence and the calculators' catalog over once."""
    _loaded["data"] = Data.from_json(text, catalog)


def render_json(query_json: str, base: str = "../") -> str:
    """`render` with JSON in and out, on the evidence `load` was given: the worker's entry."""
    return json.dumps(render(json.loads(query_json), _loaded["data"], base))
