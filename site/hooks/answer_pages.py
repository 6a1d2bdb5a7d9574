"""The buyer's answer where readers land: on Home and on every model page, per model ×
workload × scenario and per lane (measured, reported, MLPerf apart), the cheapest GPU per 1M
accepted output tokens at its result's latency target (SLO). MLPerf rows are never ranked
against the others (its messaging guidelines): they carry their result ID and footnote, and
their $ figure is marked as derived. Strings from result files are HTML-escaped."""

from collections.abc import Iterable, Mapping

from catalog_pages import esc, price_link, scrolled
from compare_pages import kind_badge, num, ranked, rows_by, usd
from compare_table import mlperf_label
from gpu_labels import gpus_link, gpus_text, names_of
from page_links import compare_slug
from result_index import Index

from registry.estimate import CostEstimate, Estimates
from registry.index import IndexRow
from registry.models import GpuEntry, ModelEntry, PriceEntry, Result
from registry.workloads import SCENARIOS

ANSWER_INTRO = (
    "Per model, workload (input → output lengths, dataset) and scenario, and per lane: "
    "*measured* by infermeter, *reported* by a cited source, and *MLPerf* results in their own "
    "lane (never ranked against the others, as MLPerf's guidelines require). Accepted tokens "
    "are those of requests that met the result's latency target (SLO, shown); where no result "
    "states one, the row says so and shows $ per output token instead, which is not the same "
    "claim. On-demand price, the cheapest usable one in the catalog. Where no result meets "
    "a stated SLO, an *estimate* from the calculators stands beside it, marked as one and "
    "never ranked with the results.\n\n"
)


def _best(rows: Iterable[IndexRow]) -> IndexRow | None:
    """The row with the lowest $/1M accepted tokens; without any, the lowest $/1M output."""
    rows = list(rows)
    accepted = [r for r in rows if r.on_demand_usd_per_million_accepted_tokens is not None]
    if accepted:
        return min(accepted, key=lambda r: r.on_demand_usd_per_million_accepted_tokens or 0)
    priced = [r for r in rows if r.on_demand_usd_per_million_output_tokens is not None]
    return min(priced, key=lambda r: r.on_demand_usd_per_million_output_tokens or 0, default=None)


def slo_text(result: Result | None) -> str:
    """A result's latency target in a reader's words, e.g. `TTFT ≤ 2,000 ms, TPOT ≤ 50 ms`."""
    if result is None:
        return "–"
    slo = result.slo
    bounds = [
        f"{name} ≤ {value:,.0f} ms"
        for name, value in (("TTFT", slo.ttft_ms), ("TPOT", slo.tpot_ms), ("E2E", slo.e2e_ms))
        if value is not None
    ]
    return ", ".join(bounds) or "none stated"


def _search_slo(row: IndexRow) -> str:
    """A server-at-SLO point's bounds: on a percentile of all requests, not on each one."""
    bounds = [
        f"{name} ≤ {value:,.0f} ms"
        for name, value in (
            ("TTFT", row.rate_search_ttft_ms),
            ("TPOT", row.rate_search_tpot_ms),
            ("E2E", row.rate_search_e2e_ms),
        )
        if value is not None
    ]
    return f"p{row.rate_search_percentile:g} {', '.join(bounds)} (all requests, not each)"


ESTIMATE_NOTE = (
    "Estimate, not a measurement: the calculators' roofline bound (memory bandwidth and peak "
    "compute) with as many sequences as the vLLM memory plan holds, at the cheapest usable "
    "on-demand price. No run reaches the bound, so a real token costs more."
)


def estimate_text(estimate: CostEstimate | None, gpu_names: Mapping[str, str] | None = None) -> str:
    """The estimate beside "no result meets this yet", marked as one; empty without one. Its
    GPUs by their names in `gpu_names` (catalog id → name)."""
    if estimate is None:
        return ""
    return (
        f'<br><small class="im-estimate" title="{esc(ESTIMATE_NOTE)}">Estimate (not measured), '
        "over every catalog GPU for this workload: at best "
        f"{usd(estimate.usd_per_million_output_tokens)}/1M output on "
        f"{gpus_text(estimate.gpu_count, estimate.gpu, gpu_names)}, the roofline bound at "
        f"{estimate.batch:,} sequences ({esc(estimate.interconnect)})</small>"
    )


def _mlperf_note(row: IndexRow, results: Mapping[str, Result]) -> str:
    """What MLPerf's messaging guidelines ask beside an MLPerf row: its result ID, its footnote,
    and that our $ figure is derived, not verified by MLCommons."""
    source = results[row.result_id].source if row.result_id in results else None
    mlperf = getattr(source, "mlperf", None)
    footnote = f" {esc(mlperf.footnote)}" if mlperf is not None else ""
    return (
        f'<br><small class="im-mlperf">{esc(mlperf_label(row))}.{footnote} '
        "The $ figure is derived by infermeter from catalog prices, not verified by MLCommons."
        "</small>"
    )


def answer_rows(
    rows: Iterable[IndexRow],
    models: Mapping[str, ModelEntry],
    base: str,
    results: Mapping[str, Result] | None = None,
    estimates: Estimates | None = None,
    *,
    model_column: bool = False,
    gpu_names: Mapping[str, str] | None = None,
) -> str:
    """Table rows answering the buyer's question per model × workload × scenario × lane (an
    MLPerf row is the best of its own lane only); `base` is the relative URL of the site's
    root, `results` (result id → Result) gives each row its SLO and MLPerf rows their
    footnote; where no result meets a stated SLO, `estimates` gives the calculators' estimate
    beside it. A row names its model only with `model_column`, for a table that mixes models:
    inside one model's section the column repeats its heading and takes a phone's width.
    GPUs are named by `gpu_names` (catalog id → name), their ids only in links and titles."""
    results = results or {}
    # An MLPerf scenario (Server, Interactive: different bounds) is a group of its own.
    groups = rows_by(
        rows,
        lambda r: (r.model, r.workload_key, r.workload, r.scenario, r.lane, r.mlperf_scenario),
    )
    cells = []
    for (model, _key, workload, scenario, lane, _mlperf), members in sorted(
        groups,
        key=lambda group: (group[0][0], group[0][2], group[0][3], group[0][4], str(group[0][5])),
    ):
        row = _best(members)
        if row is None:
            continue
        accepted = row.on_demand_usd_per_million_accepted_tokens
        result = results.get(row.result_id)
        at_slo = scenario == "server_at_slo"
        estimate = (
            estimates.cheapest(model, result.identity.workload)
            if accepted is None and not at_slo and estimates is not None and result is not None
            else None
        )
        slo = _search_slo(row) if at_slo else slo_text(result)
        model_cell = (
            f'<td><a href="{base}models/{esc(model)}/">'
            f"{esc(models[model].name if model in models else model)}</a></td>"
            if model_column
            else ""
        )
        # The GPUs first (the sticky column of a scrolling table), their $ next: a phone shows
        # both unscrolled and keeps the GPUs in view as the table scrolls (as the compare table).
        cells.append(
            f'<tr data-lane="{esc(lane)}">{model_cell}'
            f"<td>{gpus_link(row.gpu_count, row.gpu, gpu_names, base)}</td>"
            + (
                f"<td>{usd(accepted)}</td>"
                if accepted is not None
                # A server-at-SLO answer met its bounds on a percentile of all requests: no
                # per-request count of accepted tokens, so its $ is per output token.
                else "<td>no per-request count: see $/1M output</td>"
                if at_slo
                else "<td>no result meets a stated SLO yet"
                + estimate_text(estimate, gpu_names)
                + "</td>"
            )
            + f"<td>{esc(workload)}</td><td>{esc(SCENARIOS.get(scenario, scenario))}</td>"
            f"<td>{kind_badge(lane)}</td>"
            + f"<td>{esc(slo) if accepted is not None or at_slo else '–'}</td>"
            + f"<td>{usd(row.on_demand_usd_per_million_output_tokens)}</td>"
            f"<td>{num(row.ttft_ms_p95, 0)}</td>"
            f'<td><a href="{base}compare/{esc(compare_slug(row.model, row.profile))}/">compare'
            f'</a> · <a href="{base}results/{esc(row.result_id)}/">result</a>'
            + (_mlperf_note(row, results) if lane.startswith("mlperf") else "")
            + "</td></tr>"
        )
    return "".join(cells)


def answer_table(body: str, *, model_column: bool = False) -> str:
    """The answer table around `answer_rows`' rows (made with the same `model_column`)."""
    if not body:
        return "<p>No result yet.</p>"
    return (
        '<div class="im-scroll"><table class="im-table im-answer" data-search-exclude><thead><tr>'
        + ("<th>Model</th>" if model_column else "")
        + "<th>GPUs</th><th>$/1M accepted</th><th>Workload</th><th>Scenario</th><th>Lane</th>"
        "<th>SLO</th><th>$/1M output</th><th>TTFT p95 ms</th><th></th>"
        f"</tr></thead><tbody>{body}</tbody></table></div>"
    )


# The workload a model page without results estimates for: one chat request of the guide's
# middle size (an example, said so on the page).
EXAMPLE_TOKENS = (1000, 1000)


def estimate_table(
    estimates: list[CostEstimate], base: str, gpu_names: Mapping[str, str] | None = None
) -> str:
    """The calculators' estimates as a table of their own, headed as estimates (GPUs by their
    names in `gpu_names`)."""
    body = "".join(
        f"<tr><td>{gpus_link(e.gpu_count, e.gpu, gpu_names, base)}</td>"
        f"<td>{usd(e.usd_per_hour, 2)}</td><td>{e.batch:,}</td>"
        f"<td>{num(e.bound_tokens_per_s, 0)} ({esc(e.limited_by)}; {esc(e.interconnect)})</td>"
        f"<td>{usd(e.usd_per_million_output_tokens)}</td></tr>"
        for e in estimates
    )
    return (
        '<div class="im-scroll"><table class="im-table im-estimates" data-search-exclude>'
        "<thead><tr><th>GPUs</th><th>$/hour</th><th>Sequences the plan holds</th>"
        "<th>Bound, output tok/s (limited by)</th><th>Estimate: at best $/1M output</th>"
        f"</tr></thead><tbody>{body}</tbody></table></div>"
    )


def model_answers(
    index: Index,
    models: Mapping[str, ModelEntry],
    estimates: Estimates | None = None,
    gpu_names: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Every catalog model's answer section (`model_answer`), the rows split by model once."""
    by_model = dict(rows_by(ranked(index.rows), lambda row: row.model))
    return {
        model_id: model_answer(
            index, model_id, models, estimates, by_model.get(model_id, []), gpu_names
        )
        for model_id in models
    }


def model_answer(
    index: Index,
    model_id: str,
    models: Mapping[str, ModelEntry],
    estimates: Estimates | None = None,
    rows: list[IndexRow] | None = None,
    gpu_names: Mapping[str, str] | None = None,
) -> str:
    """Markdown of a model page's answer section (relative to `models/<id>/`): the answer
    table, or "no result meets this yet" with the calculators' estimates apart. `rows`: the
    model's ranked rows, when the caller has them; `gpu_names`: catalog id → GPU name."""
    mine = [row for row in ranked(index.rows) if row.model == model_id] if rows is None else rows
    heading = "\n### The cheapest GPU per 1M accepted output tokens\n\n"
    if mine:
        return (
            heading
            + ANSWER_INTRO
            + answer_table(
                answer_rows(mine, models, "../../", index.results, estimates, gpu_names=gpu_names)
            )
            + "\n"
        )
    ranked_estimates = estimates.ranked(model_id, *EXAMPLE_TOKENS)[:5] if estimates else []
    if not ranked_estimates:
        return heading + "No result meets this yet.\n"
    return (
        heading
        + "**No result meets this yet.** Beside it, the calculators' estimate for one example "
        f"workload ({EXAMPLE_TOKENS[0]:,} → {EXAMPLE_TOKENS[1]:,} tokens), the five cheapest "
        f"deployments that fit. {ESTIMATE_NOTE}\n\n"
        + estimate_table(ranked_estimates, "../../", gpu_names)
        + "\n"
    )


def answer_anchor(model_id: str) -> str:
    """The id of a model's answer section on Home."""
    return f"answer-{model_id}"


def home_answers(
    index: Index,
    models: Mapping[str, ModelEntry],
    estimates: Estimates | None = None,
    gpu_names: Mapping[str, str] | None = None,
) -> str:
    """Home's answer, narrowed to the reader's model without JavaScript: a jump list of the
    models with answers, then one section per model (a heading to land on, its model page, its
    answer table by workload × scenario × lane; GPUs by their names in `gpu_names`)."""
    by_model = rows_by(ranked(index.rows), lambda row: row.model)

    def name(model_id: str) -> str:
        return models[model_id].name if model_id in models else model_id

    sections, jumps = [], []
    for model_id, rows in sorted(by_model, key=lambda group: (name(group[0]), group[0])):
        body = answer_rows(rows, models, "", index.results, estimates, gpu_names=gpu_names)
        if not body:
            continue
        anchor = esc(answer_anchor(model_id))
        count = body.count("<tr ")
        jumps.append(f'<li><a href="#{anchor}">{esc(name(model_id))}</a> ({count})</li>')
        sections.append(
            f'<h3 id="{anchor}">{esc(name(model_id))}<a class="headerlink" href="#{anchor}" '
            'title="Permanent link">&para;</a></h3>\n'
            f"<p>{count} answer{'s' if count != 1 else ''} by workload, scenario and lane · "
            f'<a href="models/{esc(model_id)}/">model page</a> (its results, compare pages and '
            'the same answer) · <a href="#answer-models">all models</a></p>\n' + answer_table(body)
        )
    if not sections:
        return answer_table("")
    return (
        '<p id="answer-models"><strong>Your model:</strong></p>\n'
        f'<ul class="im-jump">{"".join(jumps)}</ul>\n' + "\n".join(sections)
    )


# Workload → shortlist, after the guide's quick decision matrix (our wording).
DECISION_MATRIX: list[tuple[str, tuple[str, ...], str]] = [
    (
        "Chat with 7-13B models, internal tools, prototypes",
        ("l4", "l40s", "rtx-4090", "rtx-5090", "a100-40gb-pcie"),
        "A low hourly price beats peak speed when the model is small and concurrency moderate.",
    ),
    (
        "30-34B models",
        ("l40s", "a100-80gb-sxm", "h100-pcie", "h100-sxm"),
        "Enough memory for a practical deployment at a lower base cost than H200 or B200.",
    ),
    (
        "70B-class models",
        ("h100-sxm", "h200-sxm", "a100-80gb-sxm"),
        "H100 is the default; H200 wins when its memory cuts the GPU count.",
    ),
    (
        "Long-context RAG",
        ("h200-sxm", "h100-nvl", "h100-sxm", "b200"),
        "KV cache and prefill make memory capacity and bandwidth matter more than the"
        " hourly price.",
    ),
    (
        "High-throughput batch jobs",
        ("a100-80gb-sxm", "l40s", "h100-sxm"),
        "Throughput per dollar matters more than latency when jobs can wait; count retries"
        " and interruptions.",
    ),
    (
        "Latency-sensitive customer chat",
        ("h100-sxm", "h200-sxm", "b200"),
        "p95/p99 latency, not mean tokens/s; newer datacenter GPUs leave room for concurrency.",
    ),
    (
        "Local inference",
        ("rtx-4090", "rtx-5090", "rtx-pro-6000-ws", "rtx-6000-ada"),
        "Private development, offline tests and small models.",
    ),
]


def home_page(
    index: Index,
    gpus: Mapping[str, GpuEntry],
    models: Mapping[str, ModelEntry],
    cheapest: Mapping[str, Mapping[str, PriceEntry]],
    estimates: Estimates | None = None,
) -> str:
    def gpu_cell(gpu_id: str) -> str:
        gpu = gpus[gpu_id]
        price = cheapest.get(gpu_id, {}).get("on_demand")
        price_text = (
            f", from {price_link(price, 'gpus/', f'${price.usd_per_gpu_hour:,.2f}/h')}"
            if price is not None
            else ""
        )
        return f'<a href="gpus/{gpu_id}/">{esc(gpu.name)}</a> ({esc(gpu.memory_gb)} GB{price_text})'

    matrix = "".join(
        f"<tr><td>{esc(workload)}</td><td"
        f">{'<br>'.join(gpu_cell(g) for g in shortlist if g in gpus)}</td>"
        f"<td>{esc(why)}</td></tr>"
        for workload, shortlist, why in DECISION_MATRIX
    )
    return (
        "---\ntitle: infermeter\n---\n\n"
        "# What a token really costs on each GPU\n\n"
        "infermeter answers one buyer's question: **which GPU serves my model and my"
        " traffic at the "
        "lowest cost per accepted token, within my latency and reliability targets?** Not"
        " the newest "
        "card, not the cheapest hour, not the best marketing benchmark: measured throughput of "
        "requests that met their latency target, priced at today's catalog prices.\n\n"
        "- [Compare GPUs](compare/index.md) per model and traffic profile\n"
        "- Calculators in your browser: [VRAM plan](calculators/vram.md), "
        "[cost per token](calculators/cost.md), [GPU fit](calculators/fit.md)\n"
        "- [How we measure](methodology.md) · [Contribute a result](contribute.md) · "
        "[Downloads](downloads.md)\n\n"
        "## Where to start: workload → shortlist\n\n"
        "A first shortlist by workload, with catalog memory and the cheapest on-demand price. "
        "Then let the GPU earn the workload: plan the memory, and compare measured results.\n\n"
        + scrolled(
            '<table class="im-table"><thead><tr><th>Workload</th><th>Start with</th><th>Why</th'
            f"></tr></thead><tbody>{matrix}</tbody></table>"
        )
        + "\n\n"
        "## The cheapest GPU per 1M accepted output tokens\n\n"
        + ANSWER_INTRO
        + home_answers(index, models, estimates, names_of(gpus))
        + "\n"
    )
