"""Pages from the result index: Compare (model × traffic profile, one table per workload ×
scenario) with its Pareto front and charts, and Downloads (Home's answer is `answer_site`, the
page per result is `result_pages`). Tables are plain HTML (readable without JavaScript);
`tables.js` adds sorting and filtering, `charts.js` draws the charts from the JSON embedded
beside them.
Every string that comes from a result file is HTML-escaped.

This module writes the compare pages; its parts: `row_groups` (how rows group),
`compare_table` (the table of every load point) and `downloads_page` (the Downloads page and
data files)."""

import json
from collections import Counter
from collections.abc import Collection, Mapping

from buyer_table import BUYER_INTRO, buyer_table
from catalog_pages import esc, front_matter_string, md_text
from compare_table import compare_table, num, usd
from gpu_labels import gpus_link
from price_notes import prices_used
from result_index import Index
from row_groups import (
    compare_slug,
    names_profile,
    profile_text,
    ranked,
    replicate_groups,
    rows_by,
)

from infermeter.calculators.price_tiers import PRICE_TIERS
from infermeter.registry.charts import chart_data, lowest_usd_per_million
from infermeter.registry.index_row import IndexRow
from infermeter.registry.models import ModelEntry
from infermeter.registry.plain_text import plain_data
from infermeter.registry.tables import derived_note
from infermeter.registry.workloads import SCENARIOS

__all__ = [
    "TIERS",
    "comparable_groups",
    "compare_page",
    "compare_slots",
    "front_table",
    "pages",
    "scenario_text",
    "slot",
]

TIERS = PRICE_TIERS  # the order tier columns take (declared in calculators.price_tiers)


def slot(name: str) -> str:
    """A marker that `registry_pages.on_post_page` swaps for big generated HTML, which so skips
    Markdown, the theme's template and the search plugin (linear in the rows, but slow)."""
    return f'<div data-im-slot="{name}"></div>'


def front_table(rows: list[IndexRow], gpu_names: Mapping[str, str] | None = None) -> str:
    """The Pareto front as a table (readable without JavaScript): per GPU × count, the points
    no other point of its sweeps beats on both speed per user and throughput per GPU; GPUs by
    their names in `gpu_names` (catalog id → name)."""
    front = sorted(
        (row for row in rows if row.on_pareto_front),
        key=lambda row: (row.gpu, row.gpu_count, row.tokens_per_s_per_user or 0),
    )
    if not front:
        return ""
    body = "".join(
        f"<tr><td>{gpus_link(row.gpu_count, row.gpu, gpu_names, '../../')}</td>"
        f"<td>{esc(row.load_label)}</td>"
        f"<td>{num(row.tokens_per_s_per_user, 1)}</td>"
        f"<td>{num(row.output_tokens_per_s_per_gpu, 0)}</td>"
        f"<td>{usd(lowest_usd_per_million(row))}</td>"
        f'<td><a href="../../results/{esc(row.result_id)}/">{esc(row.result_id)}</a></td></tr>'
        for row in front
    )
    return (
        '<div class="im-scroll"><table class="im-table im-front"><thead><tr><th>GPUs</th>'
        "<th>Load</th><th>Tokens/s per user</th><th>Output tokens/s per GPU</th>"
        "<th>$/1M (accepted, else output)</th><th>Result</th></tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def scenario_text(scenario: str) -> str:
    """A scenario key (`closed`, …), optionally with a ` · lane` suffix, in a reader's words."""
    base, _sep, lane = scenario.partition(" · ")
    return SCENARIOS.get(base, base) + (f" · {lane}" if lane else "")


def mlperf_lane_suffix(row: IndexRow) -> str:
    """` · MLPerf Server (closed division)` for an MLPerf row: each scenario and division is a
    table of its own (Interactive's bounds are tighter than Server's); '' for other rows."""
    if row.mlperf_scenario is None:
        return ""
    return f" · MLPerf {row.mlperf_scenario} ({row.mlperf_division} division)"


def comparable_groups(rows: list[IndexRow]) -> list[tuple[tuple[str, str, str], list[IndexRow]]]:
    """The rows of one model split by workload × scenario (MLPerf's lane apart): ((workload
    key, workload, scenario), rows), in a stable order. Rows of different groups never share a
    table or a chart."""
    groups = rows_by(
        rows,
        lambda row: (
            row.workload_key,
            row.workload,
            row.scenario + mlperf_lane_suffix(row),
        ),
    )
    return sorted(groups, key=lambda group: (group[0][1], group[0][2], group[0][0]))


def compare_page(
    model: str,
    profile: str,
    model_name: str,
    groups: list[tuple[str, str]] | None = None,
    named: bool = True,
) -> str:
    """Markdown of a compare page; `groups` are its tables' (workload, scenario) in order;
    `named`: whether its title names its profile (`names_profile`)."""
    slug = compare_slug(model, profile)
    title = f"{model_name}: {profile_text(profile)}" if named else model_name
    under = f" ({esc(profile_text(profile))})" if named else ""
    sections = "".join(
        f"## {md_text(workload)} · {md_text(scenario_text(scenario))}\n\n"
        + slot(f"compare-table-{number}")
        + "\n\n"
        for number, (workload, scenario) in enumerate(groups or [])
    )
    return (
        f"---\ntitle: {front_matter_string(title)}\n"
        "hide: [navigation, toc]\n---\n\n"
        f"# {md_text(title)}\n\n"
        f"Every load point of every result for `{esc(model)}`{under}, "
        "one table per workload (input → output lengths, dataset) and scenario: only like "
        "compares with like. Dollar figures use, per tier, the GPU's catalog price that figures "
        "use (a recent official list price first: its page gives the rule) × GPU count; "
        "*measured* rows come from `infermeter bench`, *reported* rows from a cited "
        "public source. Results of the same setup and load from several runs (replicates) share "
        "one row: its figures are their medians, *n* and the range of output tokens/s show their "
        "spread, and each replicate is linked. *% of bound*: output tokens/s as a share of the "
        "most the deployment could physically produce at that load (the roofline bound of the "
        "registry's physics check: memory bandwidth and peak compute from the GPU's specs); "
        "each cell names the bound (its batch and context on hover), or says why there is none. "
        "Click a header to sort. [Data as CSV]("
        + f"{slug}.csv"
        + f"), with the workload and scenario of every row.\n\n{BUYER_INTRO}\n\n"
        + sections
    )


def _group_html(
    rows: list[IndexRow],
    flagged_gpus: Collection[str] = (),
    gpu_names: Mapping[str, str] | None = None,
) -> str:
    groups = replicate_groups(rows)
    # An attribute, not a <script>: instant navigation re-runs scripts in the content.
    chart_json = json.dumps(
        plain_data(chart_data([group.row for group in groups])),
        sort_keys=True,
        separators=(",", ":"),
    )
    front = front_table(rows, gpu_names)
    if front:
        sweep = (
            "<p><strong>Pareto front</strong> of the load points above (no other point of the same "
            "GPU and count is faster per user <em>and</em> per GPU):</p>" + front
        )
    elif rows and rows[0].scenario == "offline":
        sweep = (
            "<p>Offline points (every request queued at once) have no per-user rate, so no "
            "Pareto front.</p>"
        )
    elif rows and rows[0].scenario == "static_batch":
        sweep = (
            "<p>Static batches (requests started together and run as one batch to its end) are no "
            "served load, so no Pareto front.</p>"
        )
    else:
        sweep = (
            "<p>No sweep (two or more closed- or open-loop points of one GPU × count) here, so "
            "no Pareto front.</p>"
        )
    pareto_chart = (
        '<figure><div class="im-chart" data-chart="pareto"></div><figcaption>Output tokens/s '
        "per GPU against tokens/s per user, one line per GPU × count through its Pareto front "
        "(the table above), whichever engine and settings reach each point; every point is in "
        "the table of load points.</figcaption></figure>"
        if front
        else ""
    )
    charts = (
        f'<div class="im-charts" data-chart-data="{esc(chart_json)}">{pareto_chart}'
        '<figure><div class="im-chart" data-chart="cost"></div><figcaption>Lowest $ per 1M '
        "accepted (else output) tokens, on-demand, per GPU × count, from zero."
        "</figcaption></figure></div>"
    )
    buyer = buyer_table(rows, flagged_gpus, gpu_names)
    # MLPerf's lane: its $ figures labelled as not verified by MLCommons (its guidelines)
    mlperf = any(row.lane.startswith("mlperf") for row in rows)
    return (
        (f'<p class="im-mlperf"><small>{esc(derived_note(rows))}</small></p>' if mlperf else "")
        + buyer
        + prices_used(rows, gpu_names)
        + "<p>Every load point:</p>"
        + compare_table(groups, gpu_names)
        + sweep
        + charts
    )


def compare_slots(
    rows: list[IndexRow],
    flagged_gpus: Collection[str] = (),
    gpu_names: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The HTML of a compare page's slots: per workload × scenario, the buyer's table, every
    load point, the front and the charts (`flagged_gpus`: GPUs with a flagged catalog price;
    `gpu_names`: catalog id → the name the tables show)."""
    return {
        slot(f"compare-table-{number}"): _group_html(group_rows, flagged_gpus, gpu_names)
        for number, (_key, group_rows) in enumerate(comparable_groups(rows))
    }


def pages(
    index: Index,
    models: Mapping[str, ModelEntry],
    flagged_gpus: Collection[str] = (),
    gpu_names: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """uri → Markdown of the compare pages; uri → slot marker → HTML of their slots (GPUs by
    their names in `gpu_names`). (Home is `answer_site.home_page`; result pages are written
    after the build: `result_pages`.)"""
    out: dict[str, str] = {}
    slots: dict[str, dict[str, str]] = {}
    links = []
    groups = rows_by(ranked(index.rows), lambda row: (row.model, row.profile))
    profiles = Counter(model for (model, _profile), _rows in groups)
    for (model, profile), rows in sorted(groups, key=lambda group: group[0]):
        name = models[model].name if model in models else model
        uri = f"compare/{compare_slug(model, profile)}.md"
        headings = [
            (workload, scenario) for (_k, workload, scenario), _r in comparable_groups(rows)
        ]
        named = names_profile(profile, profiles[model])
        out[uri] = compare_page(model, profile, name, headings, named)
        slots[uri] = compare_slots(rows, flagged_gpus, gpu_names)
        text = f"{name} ({profile_text(profile)})" if named else name
        links.append(
            f"| [{md_text(text)}]({compare_slug(model, profile)}.md) | {len(headings)} |"
            f" {len({r.result_id for r in rows})} |"
        )
    table = (
        "| Model | Tables (workload × scenario) | Results |\n|---|---|---|\n" + "\n".join(links)
        if links
        else "No results yet."
    )
    out["compare/index.md"] = (
        "---\ntitle: Compare\n---\n\n# Compare GPUs\n\nOne page per model (and per traffic "
        "profile where a model has results of more than one), a table per workload × scenario "
        "on it: only like compares with like.\n\n" + table + "\n"
    )
    return out, slots
