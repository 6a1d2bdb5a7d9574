"""The pages that answer the buyer, built from `calculators.answer` at build time: the answer
page (`answer/`, a form whose values live in the URL query, recomputed in the browser by
`answer_render`), one pre-rendered page per preset question (readable without JavaScript),
the buyer's guide's GPU comparisons computed, and Home, every sentence of which comes from the
computed answers. `data/answers.json` holds every answer these pages show; `data/evidence.json`
is what the browser recomputes from."""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from answer_render import (
    Data,
    answer_title,
    answers_html,
    esc,
    estimate_paragraph,
    gpus_text,
    mlperf_note,
    ranking_html,
    usd,
    winners_html,
)

from infermeter.calculators.answer import PRESETS, Answer, Estimate, Preset, Question, Row
from infermeter.calculators.answer_estimate import (
    AnswerEstimator,
    native_precision,
    workload_tokens_of,
)
from infermeter.calculators.answer_question import EXAMPLE_TOKENS
from infermeter.calculators.inputs import ANSWER
from infermeter.calculators.price_tiers import MARKET_TIER
from infermeter.registry.answers import Evidence, catalog_estimator, every_estimate, site_answers
from infermeter.registry.evidence import answer_prices, evidence
from infermeter.registry.index_row import IndexRow
from infermeter.registry.models import GpuEntry, ModelEntry, PriceEntry, Result

ANSWER_BASE = "../"  # the answer page's relative URL of the site's root
PRESET_BASE = "../../"
# the id of a model page's heading over its rankings (mkdocs' slug of `model_section`'s heading)
MODEL_ANSWERS = "the-cheapest-gpu-per-1m-accepted-output-tokens"


@dataclass(frozen=True)
class Site:
    """What the answer pages are made of."""

    data: Data
    answers: Mapping[str, list[Answer]]  # preset id → its answers (every model)
    default_model: str
    estimator: AnswerEstimator  # the one estimate path (`calculators.answer_estimate`)


def build(
    rows: Sequence[IndexRow],
    results: Mapping[str, Result],
    gpus: Mapping[str, GpuEntry],
    models: Mapping[str, ModelEntry],
    prices: Mapping[str, PriceEntry],
) -> Site:
    """The answers the site shows and the data the browser recomputes them from."""
    found = Evidence(evidence(rows, results), answer_prices(prices.values()))
    estimator = catalog_estimator(gpus, models, found.prices, workload_tokens_of(found.points))
    estimates = every_estimate(found, estimator)
    data = Data(
        found.points,
        found.prices,
        {model_id: model.name for model_id, model in models.items()},
        {gpu_id: gpu.name for gpu_id, gpu in gpus.items()},
        estimates,
        estimator.held_out,
        estimator,
    )
    # the presets' SLOs are known here: a prediction at an SLO is the build's to make
    answers = site_answers(found, estimator)
    answered = Counter(
        a.question.model for found_list in answers.values() for a in found_list if a.rows
    )
    default = min(answered, key=lambda m: (-answered[m], m)) if answered else ""
    return Site(data, answers, default, estimator)


def preset_query(preset: Preset, model: str) -> str:
    """The answer page's query for a preset's question about one model."""
    slo = preset.slo
    parts = [f"model={model}"]
    if not slo.is_batch:
        parts.append(f"percentile={slo.percentile:g}")
        parts += [f"{name}={value:g}" for name, value in slo.bounds().items()]
    return "?" + "&".join(parts)


def _select(name: str, label: str, choices: Sequence[tuple[str, str]], default: str) -> str:
    options = "".join(
        f'<option value="{esc(value)}"{" selected" if value == default else ""}>{esc(text)}'
        "</option>"
        for value, text in choices
    )
    return (
        f'<div class="im-field"><label for="im-{name}">{esc(label)}</label>'
        f'<select id="im-{name}" name="{name}" data-default="{esc(default)}">{options}</select>'
        f'<span class="im-error" data-error-for="{name}" role="alert"></span></div>'
    )


def _text(name: str, label: str, default: str, hint: str, listed: str = "") -> str:
    mode = "" if listed else ' inputmode="decimal"'
    data_list = f' list="{listed}"' if listed else ""
    return (
        f'<div class="im-field"><label for="im-{name}">{esc(label)}</label>'
        f'<input type="text" id="im-{name}" name="{name}" value="{esc(default)}" '
        f'data-default="{esc(default)}"{mode}{data_list}><small>{esc(hint)}</small>'
        f'<span class="im-error" data-error-for="{name}" role="alert"></span></div>'
    )


# What the tier select says of a tier whose name alone does not (the answers' own)
TIER_NAMES = {MARKET_TIER: "market floor (the cheapest price two providers agree on)"}


def model_choices(data: Data) -> list[tuple[str, str]]:
    """The models a reader may ask about, (id, name) by name: those with results, then the
    catalog's others, named as answered by an estimate only."""
    measured = {p.model for p in data.points}
    by_name = sorted(set(data.models) | measured, key=lambda m: data.models.get(m, m))
    return [(m, data.models.get(m, m)) for m in by_name if m in measured] + [
        (m, f"{data.models[m]} (no result yet: estimate)") for m in by_name if m not in measured
    ]


def answer_form(site: Site) -> str:
    """The question's fields (`calculators.inputs.ANSWER`: the CLI's options too), named as the
    URL query keys; those with a list to pick from are selects of what the evidence holds."""
    data = site.data
    precisions = sorted({p.precision for p in data.points})
    tiers = sorted({p.tier for p in data.prices})
    workloads = sorted({p.workload for p in data.points})
    picks = {
        "model": model_choices(data),
        "precision": [("", "each in turn")] + [(p, p) for p in precisions],
        "tier": [(t, TIER_NAMES.get(t, t.replace("_", "-"))) for t in tiers],
    }
    fields = []
    for field in ANSWER:
        if field.name in picks:
            default = site.default_model if field.name == "model" else field.default
            fields.append(_select(field.name, field.label, picks[field.name], default))
        else:
            listed = "im-workloads" if field.name == "workload" else ""
            fields.append(_text(field.name, field.label, field.default, field.help, listed))
    datalist = "".join(f'<option value="{esc(w)}"></option>' for w in workloads)
    return (
        '<form class="im-form" autocomplete="off" onsubmit="return false" data-search-exclude>'
        + "".join(fields)
        + f'</form><datalist id="im-workloads">{datalist}</datalist>'
    )


def answer_page(site: Site, default_html: str) -> str:
    """Markdown of `answer/`: the form, the default question's answer pre-rendered, the presets."""
    presets = "".join(
        f'<li><a href="{esc(p.id)}/">{esc(p.title)}</a> (SLO: {esc(p.slo.text())}): '
        f"{esc(p.why)}</li>"
        for p in PRESETS
    )
    block = (
        f'<div class="im-calc im-answer-page" data-calc="answer" data-base="{ANSWER_BASE}" '
        f'data-state="static">{answer_form(site)}'
        '<p class="im-status" data-status aria-live="polite">Pre-rendered default (the batch '
        "question), computed when the site was built; your question is recomputed in your "
        "browser (it needs JavaScript).</p>"
        '<p class="im-error" data-error-for="" role="alert"></p>'
        f'<div class="im-output" data-outputs data-search-exclude>{default_html}</div></div>'
    )
    return (
        "---\ntitle: Your answer\ndescription: Which GPU serves your model at the lowest cost "
        "per accepted token, at your latency target.\n---\n\n"
        "# Your answer: $ per 1M accepted output tokens\n\n"
        "Pick a model, a workload, a weight precision, a latency target (SLO: bounds on TTFT, "
        "TPOT and end-to-end latency at one percentile; none asks the batch question) and a "
        "price tier. Deployments (GPU × count) are ranked by $ per 1M accepted output tokens "
        "within one model, workload, precision, scenario and lane each, never across them "
        "([what accepted means](../methodology.md#accepted-for-each-kind-of-evidence)). "
        "Every value is in the address bar, so an answer is a link; it is recomputed in your "
        "browser from the published data, by the same Python as `infermeter registry answer`."
        "\n\n"
        f'<ul class="im-presets">{presets}</ul>\n\n{block}\n'
    )


def _model_links(preset: Preset, models: Sequence[str], names: Mapping[str, str], base: str) -> str:
    return " · ".join(
        f'<a href="{base}answer/{esc(preset_query(preset, m))}">{esc(names.get(m, m))}</a>'
        for m in models
    )


def preset_page(site: Site, preset: Preset) -> str:
    """Markdown of one preset's page: its bounds, then per model its rankings, a row each (their
    cheapest; each ranking's three cheapest are on the model's page)."""
    found = site.answers[preset.id]
    data = site.data
    models = sorted({a.question.model for a in found}, key=lambda m: data.models.get(m, m))
    sections = []
    for model in models:
        mine = [a for a in found if a.question.model == model]
        if not any(a.rows for a in mine):
            continue
        link = f"{PRESET_BASE}answer/{esc(preset_query(preset, model))}"
        sections.append(
            f'<h3 id="{esc(model)}">{esc(data.models.get(model, model))}</h3>'
            f'<p><a href="{PRESET_BASE}models/{esc(model)}/#{MODEL_ANSWERS}">Each ranking\'s '
            f'three cheapest</a> (the model\'s page) · <a href="{link}">the full answer, with '
            "every deployment and why the other workloads' results miss</a></p>"
            + winners_html(mine, PRESET_BASE, data.gpus)
        )
    unanswered = [m for m in models if not any(a.rows for a in found if a.question.model == m)]
    missing = (
        f"<p>No result meets this for: {_model_links(preset, unanswered, data.models, PRESET_BASE)}"
        " (each link shows why).</p>"
        if unanswered
        else ""
    )
    return (
        # Out of the site's search: its per-model headings would crowd out the model and
        # compare pages a search for a model's name should find first.
        f"---\ntitle: {preset.title}\nsearch:\n  exclude: true\n---\n\n# {preset.title}\n\n"
        f'<p class="im-slo" data-slo>SLO: {esc(preset.slo.text())}. {esc(preset.why)}</p>\n\n'
        "Per model, a row per ranking (one workload, weight precision, scenario and lane): its "
        "cheapest deployment per 1M accepted output tokens at on-demand prices, and the next "
        "cheapest against it.\n\n" + "\n".join(sections) + f"\n\n{missing}\n"
    )


# --- the buyer's guide's comparisons ----------------------------------------------------------

PAIRS = (
    ("h200-sxm", "h100-sxm"),
    ("b200", "h200-sxm"),
    ("mi300x", "h100-sxm"),
    ("b300", "b200"),
    ("mi355x", "b200"),
)


@dataclass(frozen=True)
class Comparison:
    """Two GPUs in one answer: each one's best row, per GPU."""

    preset: Preset
    found: Answer
    first: Row
    second: Row

    def price_ratio(self) -> float:
        first, second = self.first.price, self.second.price
        assert first is not None
        assert second is not None
        return first.usd_per_gpu_hour / second.usd_per_gpu_hour

    def throughput_ratio(self) -> float:
        def per_gpu(row: Row) -> float:
            return (row.acceptance.accepted_tokens_per_s or 0.0) / row.point.gpu_count

        return per_gpu(self.first) / per_gpu(self.second)

    def winner(self) -> Row:
        first, second = self.first, self.second
        return (
            first
            if (first.usd_per_million_accepted or 0) <= (second.usd_per_million_accepted or 0)
            else second
        )

    def market_price_ratio(self) -> float:
        """The price ratio at each GPU's market floor where its price is well above it
        (`Price.market_usd_per_gpu_hour`), else at its price."""
        return _market_price(self.first) / _market_price(self.second)

    def market_winner(self) -> Row:
        """The one cheaper per 1M accepted tokens at those prices (`market_price_ratio`)."""
        first, second = _market_usd(self.first), _market_usd(self.second)
        return self.first if first <= second else self.second


def _market_price(row: Row) -> float:
    price = row.price
    assert price is not None  # a comparison's rows are priced
    return price.market_usd_per_gpu_hour or price.usd_per_gpu_hour


def _market_usd(row: Row) -> float:
    return row.market_usd_per_million_accepted or row.usd_per_million_accepted or 0.0


def comparisons(site: Site) -> list[Comparison]:
    """Every answer where both GPUs of a pair have a priced row (each GPU's cheapest row)."""
    found_pairs = []
    for preset in PRESETS:
        for found in site.answers[preset.id]:
            best: dict[str, Row] = {}
            for row in found.rows:
                best.setdefault(row.point.gpu, row)
            for first, second in PAIRS:
                if first in best and second in best:
                    found_pairs.append(Comparison(preset, found, best[first], best[second]))
    return found_pairs


def _comparison_row(found: Comparison, site: Site) -> str:
    names, winner = site.data.gpus, found.winner()
    loser = found.second if winner is found.first else found.first
    model = found.found.question.model
    price, throughput = found.price_ratio(), found.throughput_ratio()
    market, market_winner = found.market_price_ratio(), found.market_winner()
    market_loser = found.second if market_winner is found.first else found.first
    return (
        "<tr data-comparison>"
        f"<td>{esc(names.get(found.first.point.gpu))} vs "
        f"{esc(names.get(found.second.point.gpu))}</td>"
        f"<td>{esc(site.data.models.get(model, model))}</td>"
        f"<td>{esc(found.preset.title)}: {esc(answer_title(found.found))}</td>"
        f'<td data-output="price_ratio" data-value="{price!r}">{price:.2f}×</td>'
        f'<td data-output="accepted_throughput_ratio" data-value="{throughput!r}">'
        f"{throughput:.2f}×</td>"
        f"<td>{esc(gpus_text(winner.point.gpu_count, winner.point.gpu, names))} "
        f"({usd(winner.usd_per_million_accepted)} vs {usd(loser.usd_per_million_accepted)})</td>"
        f'<td data-output="market_price_ratio" data-value="{market!r}">{market:.2f}×</td>'
        f"<td>{esc(gpus_text(market_winner.point.gpu_count, market_winner.point.gpu, names))} "
        f"({usd(_market_usd(market_winner))} vs {usd(_market_usd(market_loser))})</td>"
        "</tr>"
    )


def comparisons_page(site: Site) -> str:
    """Markdown of the buyer's guide's comparisons: price ratio beside accepted-throughput ratio."""
    names = site.data.gpus
    found = comparisons(site)
    rows = "".join(_comparison_row(c, site) for c in found)
    summary, market = (
        "; ".join(f"{name} wins {count}" for name, count in sorted(wins.items()))
        for wins in (
            Counter(names.get(c.winner().point.gpu, c.winner().point.gpu) for c in found),
            Counter(
                names.get(c.market_winner().point.gpu, c.market_winner().point.gpu) for c in found
            ),
        )
    )
    pairs = "; ".join(f"{names.get(a, a)} vs {names.get(b, b)}" for a, b in PAIRS)
    return (
        "---\ntitle: GPU against GPU\nsearch:\n  exclude: true\n---\n\n"
        "# GPU against GPU: price ratio against accepted "
        "throughput\n\n"
        "The decision between two GPUs is the ratio of their prices against the ratio of their "
        "accepted output (the guide's example: 1.4× the price for 1.8× the accepted output "
        "wins; 2.2× the price for 10 % more loses). Below, computed for every answer where both "
        "GPUs have a priced row: per GPU, the price ratio (per GPU-hour, on-demand) beside the "
        "accepted-throughput ratio (accepted output tokens/s per GPU, each GPU's cheapest "
        "deployment in that answer), and which one costs less per 1M accepted tokens. "
        "The one whose throughput ratio exceeds its price ratio wins. The pairs: "
        f"{esc(pairs)}.\n\n"
        f"{len(found)} comparisons; {esc(summary) or 'none yet'}.\n\n"
        "Those prices follow the one basis of every ranking (an official list first, see "
        "[Methodology](../methodology.md)), which can sit far above what renting costs (OCI's "
        "H100 list, for one, is several times what two other providers ask). So the last two "
        "columns compare again at each GPU's market floor, the cheapest price two providers "
        "agree on, "
        "where its price is more than 25 % above it (as every ranking's row says): "
        f"{esc(market) or 'none yet'}.\n\n"
        '<div class="im-scroll"><table class="im-table" data-search-exclude><thead><tr>'
        "<th>Pair</th><th>Model</th><th>Question and evidence</th><th>Price ratio</th>"
        "<th>Accepted-throughput ratio</th><th>Cheaper per 1M accepted</th>"
        "<th>Price ratio at market floors</th><th>Cheaper at market floors</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>\n"
    )


# --- Home -------------------------------------------------------------------------------------


def shortlist(
    found: Sequence[Answer], names: Mapping[str, str], top: int = 3
) -> list[tuple[str, int]]:
    """The GPUs that win the most of these answers (the top of each computed ranking)."""
    wins = Counter(names.get(a.rows[0].point.gpu, a.rows[0].point.gpu) for a in found if a.rows)
    return sorted(wins.items(), key=lambda item: (-item[1], item[0]))[:top]


def home_sentence(preset: Preset, found: Sequence[Answer], names: Mapping[str, str]) -> str:
    """One computed sentence: which GPUs top how many of the preset's answers."""
    answered = [a for a in found if a.rows]
    models = {a.question.model for a in answered}
    if not answered:
        return "No result meets this yet."
    leaders = ", ".join(f"{name} ({count})" for name, count in shortlist(found, names))
    return (
        f"{len(answered)} rankings over {len(models)} models; the cheapest per 1M accepted "
        f"tokens most often: {leaders}."
    )


def home_bounds() -> str:
    """The picker's latency target: TTFT and TPOT bounds at the answer's default percentile
    (`ANSWER`'s fields: the answer page's and `registry answer`'s own); left empty, none."""
    fields = {field.name: field for field in ANSWER}
    percentile = fields["percentile"].default
    return "".join(
        # a label and its input wrap as one
        f'<span class="im-nowrap"><label for="im-home-{name}">p{esc(percentile)} '
        f"{esc(fields[name].label)}</label> "
        f'<input id="im-home-{name}" name="{name}" type="number" min="0" step="any" '
        f'inputmode="decimal" placeholder="none" title="{esc(fields[name].help)}"></span> '
        for name in ("ttft_ms", "tpot_ms")
    )


def home_page(site: Site) -> str:
    """Markdown of Home: the question, a model picker and the presets, each with computed
    sentences, then the model list."""
    data, models = site.data, model_choices(site.data)
    options = "".join(
        f'<option value="{esc(m)}"{" selected" if m == site.default_model else ""}>'
        f"{esc(name)}</option>"
        for m, name in models
    )
    picker = (
        '<form class="im-picker" action="answer/" method="get" data-search-exclude>'
        '<label for="im-home-model">Your model</label> '
        f'<select id="im-home-model" name="model">{options}</select> '
        f"{home_bounds()}"
        '<button type="submit">Answer</button></form>'
    )
    presets = "".join(
        f'<li data-preset="{esc(p.id)}"><a href="answer/{esc(p.id)}/"><strong>{esc(p.title)}'
        # the batch preset's title says it has no bound: "(none (batch))" after it said it twice
        f"</strong></a>{'' if p.slo.is_batch else f' ({esc(p.slo.text())})'}: "
        "<span data-home-sentence>"
        f"{esc(home_sentence(p, site.answers[p.id], data.gpus))}</span></li>"
        for p in PRESETS
    )
    model_list = "".join(
        f'<li><a href="answer/?model={esc(m)}">{esc(name)}</a> · '
        f'<a href="models/{esc(m)}/">model page</a></li>'
        for m, name in models
    )
    return (
        "---\ntitle: infermeter\n---\n\n# What a token really costs on each GPU\n\n"
        "Which GPU serves your model and traffic at the lowest cost per accepted token, within "
        "your latency target? Measured and published results, priced at catalog prices, ranked "
        "like with like.\n\n"
        f"{picker}\n\n"
        f'<ul class="im-presets">{presets}</ul>\n\n'
        "[GPU against GPU](answer/comparisons.md) · [Compare](compare/index.md) · "
        "[Calculators](calculators/vram.md) · [Methodology](methodology.md) · "
        "[Downloads](downloads.md)\n\n"
        "## Models {#models}\n\n"
        f'<ul class="im-model-list" data-search-exclude>{model_list}</ul>\n'
    )


# --- model pages ------------------------------------------------------------------------------

MODEL_BASE = "../../"


def model_section(site: Site, model: str) -> str:
    """Markdown of a model page's answer section: per preset, the model's rankings (top three
    deployments each) or its nearest miss and estimate; for a model without evidence, the
    estimates (`model_estimates`)."""
    if model not in {p.model for p in site.data.points}:
        return model_estimates(site, model)
    parts = [
        "\n### The cheapest GPU per 1M accepted output tokens\n\n"
        "Per preset question, each ranking one workload, weight precision, scenario and lane "
        f'(<a href="{MODEL_BASE}answer/{esc(preset_query(PRESETS[-1], model))}">ask your own '
        f'question</a>, <a href="{MODEL_BASE}methodology/#accepted-for-each-kind-of-evidence">'
        "what accepted means</a>).\n\n"
        # Out of the site's search, as the rankings' tables are: its workload titles (data set
        # names, model names) would crowd out the compare pages a model's name should find.
        "<div data-search-exclude>"
    ]
    for preset in PRESETS:
        mine = [a for a in site.answers[preset.id] if a.question.model == model]
        if not mine:
            continue
        link = f"{MODEL_BASE}answer/{esc(preset_query(preset, model))}"
        answered = [a for a in mine if a.rows]
        body = (
            "".join(ranking_html(a, MODEL_BASE, site.data.gpus, 3) for a in answered)
            + mlperf_note(answered)
            if answered
            else answers_html(mine, preset.slo, MODEL_BASE, site.data.gpus, 3)
        )
        parts.append(
            f"<p><strong>{esc(preset.title)}</strong></p>"
            f'<p class="im-slo">SLO: {esc(preset.slo.text())} · '
            f'<a href="{link}">the full answer</a></p>{body}'
        )
    return "".join(parts) + "</div>\n\n"


def model_estimates(site: Site, model: str) -> str:
    """Markdown of the answer section of a model page without results (relative to
    `models/<id>/`): "no result meets this yet" and, apart, the answers' estimate at the
    checkpoint's own weight precision for each preset question an example workload fits."""
    heading = "\n### The cheapest GPU per 1M accepted output tokens\n\n"
    config = site.estimator.configs.get(model)
    precision = native_precision(config or {})
    items = []
    for preset in PRESETS:
        if config is None or preset.min_input_tokens > EXAMPLE_TOKENS[0]:
            continue
        estimate = site.estimator.estimate(Question(model, preset.slo), EXAMPLE_TOKENS, precision)
        if estimate is None:  # no plan of a priced GPU holds the weights
            continue
        said = (
            estimate_paragraph(estimate, site.data.gpus)
            if isinstance(estimate, Estimate)
            # no deployment meets the preset's bounds (the checkpoint's own weights: never
            # refused), as the answer page says it
            else f'<span class="im-no-estimate" data-no-estimate>No estimate: '
            f"{esc(estimate.reason)}</span>"
        )
        link = f"{MODEL_BASE}answer/{esc(preset_query(preset, model))}"
        items.append(
            f'<li data-preset="{esc(preset.id)}"><strong>{esc(preset.title)}</strong> '
            f'(SLO: {esc(preset.slo.text())}; <a href="{link}">ask with your own bounds, '
            f"workload or precision</a>): {said}</li>"
        )
    if not items:
        return heading + "No result meets this yet.\n"
    return (
        heading
        + "**No result meets this yet.** Beside it, the estimate the answer page gives where "
        f"nothing qualifies, for one example workload ({EXAMPLE_TOKENS[0]:,} → "
        f"{EXAMPLE_TOKENS[1]:,} tokens) at the checkpoint's own weights ({esc(precision)}), per "
        "preset question it fits:\n\n"
        f'<ul class="im-model-estimates" data-search-exclude>{"".join(items)}</ul>\n'
    )
