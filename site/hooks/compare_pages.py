"""Pages from the result index: Compare (model × traffic profile, one table per workload ×
scenario) with its Pareto front and charts, and Downloads (Home's answer is `answer_pages`, the
page per result is `result_pages`). Tables are plain HTML (readable without JavaScript);
`tables.js` adds sorting and filtering, `charts.js` draws the charts from the JSON embedded
beside them.
Every string that comes from a result file is HTML-escaped."""

import csv
import dataclasses
import io
import json
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from statistics import median
from typing import Any

from buyer_table import buyer_table
from catalog_pages import esc, front_matter_string
from result_index import Index

from registry.charts import chart_data, lowest_usd_per_million
from registry.index import COLUMNS as INDEX_COLUMNS
from registry.index import IndexRow, render_csv
from registry.index import render_json as index_json
from registry.models import GpuEntry, ModelEntry, PriceEntry
from registry.plain_text import plain_data
from registry.tables import number_text, usd_text
from registry.workloads import SCENARIOS

TIERS = ("on_demand", "interruptible", "reserved")


# A figure is written as on a result page and in `bench report` (registry.tables).
num = number_text
usd = usd_text


def _nowrap(text: str) -> str:
    # A cell of short lines that must not wrap into a tall row (`.im-nowrap`).
    return f'<span class="im-nowrap">{text}</span>'


def _cell(sort: Any, text: str) -> str:
    key = "" if sort is None else esc(sort)
    return f'<td data-sort="{key}">{text}</td>'


def _slug(model: str, profile: str) -> str:
    return f"{model}--{profile}"


def kind_badge(kind: str) -> str:
    return f'<span class="im-kind im-kind-{esc(kind)}">{esc(kind)}</span>'


# The figures that differ between replicates (measured and derived numbers): a replicate
# group's row shows the median of each.
SUMMARY_COLUMNS = tuple(
    name
    for name in INDEX_COLUMNS[INDEX_COLUMNS.index("duration_s") :]
    if not name.endswith(("_price_id", "_basis")) and name != "on_pareto_front"
)


@dataclasses.dataclass(frozen=True)
class Group:
    """One row of a compare table: a load point, or a replicate group (the same setup and load
    from several results) summarised by the median of each figure."""

    row: IndexRow
    members: tuple[IndexRow, ...]


def replicate_groups(rows: Iterable[IndexRow]) -> list[Group]:
    """The rows by replicate key, in the order of each group's first row."""
    groups = []
    for _key, members in rows_by(rows, lambda row: row.replicate_key):
        if len(members) == 1:
            groups.append(Group(members[0], (members[0],)))
            continue
        medians: dict[str, Any] = {}
        for name in SUMMARY_COLUMNS:
            values = [getattr(m, name) for m in members if getattr(m, name) is not None]
            medians[name] = median(values) if values else None
        groups.append(Group(dataclasses.replace(members[0], **medians), tuple(members)))
    return groups


def _kinds(group: Group) -> list[str]:
    return sorted({member.source_kind for member in group.members})


def _spread(group: Group) -> str:
    """`n=3, 1,180–1,350 tok/s` under a group's output tok/s (the index's min and max)."""
    row = group.row
    if len(group.members) == 1:
        return ""
    return (
        f'<br><small class="im-spread">n={len(group.members)}, '
        f"{num(row.output_tokens_per_s_min, 0)}–{num(row.output_tokens_per_s_max, 0)} tok/s"
        "</small>"
    )


def _result_links(group: Group) -> str:
    links = [
        f'<a href="../../results/{esc(m.result_id)}/">{esc(m.result_id)}</a> · '
        f'<a href="../../results/{esc(m.result_id)}.json">file</a>'
        + ("" if len(group.members) == 1 else f" ({num(m.output_tokens_per_s, 0)} tok/s)")
        for m in group.members
    ]
    return "<br>".join(links)


def _hourly_price(group: Group) -> str:
    """The deployment's on-demand $/hour, linked to the price's row (date, source) on the GPU
    page."""
    row = group.row
    text = usd(row.on_demand_usd_per_hour, 2)
    if row.on_demand_price_id is None:
        return text
    return (
        f'<a href="../../gpus/{esc(row.gpu)}/#price-{esc(row.on_demand_price_id)}" '
        f'title="{esc(row.on_demand_price_id)}">{text}</a>'
    )


def roofline_cell(row: IndexRow) -> str:
    """Output tokens/s as a % of the deployment's roofline bound and the bound's figure and
    kind (its batch and context in the title: the cell stays two short lines), or why there is
    no bound (`registry.roofline_share`)."""
    basis = esc(row.roofline_basis or "")
    if row.roofline_tokens_per_s is None:
        why = basis or "no bound"
        return f'–<br><small class="im-bound">{why}</small>'
    if row.roofline_pct is None and row.output_tokens_per_s is None:
        # A bound with nothing to hold against it (a source that states total tokens/s or a
        # batch's latency only): say so rather than show a bare dash.
        return '–<br><small class="im-bound">no output tokens/s stated</small>'
    kind = esc((row.roofline_basis or "").split(" bound", 1)[0])
    pct = "–" if row.roofline_pct is None else f"{num(row.roofline_pct, 0)} %"
    return (
        f'{pct}<br><small class="im-bound" title="{basis}">of '
        f"{num(row.roofline_tokens_per_s, 0)} tok/s, {kind}</small>"
    )


# one column: header, value of a group's row, HTML of the value
Column = tuple[str, Callable[[Group], Any], Callable[[Group], str]]


def _accepted_per_hour(row: IndexRow) -> float | None:
    tps = row.accepted_output_tokens_per_s
    return None if tps is None else tps * 3600


COLUMNS: list[Column] = [
    (
        "GPU",
        lambda g: g.row.gpu,
        lambda g: f'<a href="../../gpus/{esc(g.row.gpu)}/">{esc(g.row.gpu)}</a>',
    ),
    # The $ per 1M tokens next to the GPU: a phone shows them without scrolling.
    (
        "$/1M accepted, on-demand",
        lambda g: g.row.on_demand_usd_per_million_accepted_tokens,
        lambda g: usd(g.row.on_demand_usd_per_million_accepted_tokens),
    ),
    (
        "$/1M output, on-demand",
        lambda g: g.row.on_demand_usd_per_million_output_tokens,
        lambda g: usd(g.row.on_demand_usd_per_million_output_tokens),
    ),
    ("GPUs", lambda g: g.row.gpu_count, lambda g: esc(g.row.gpu_count)),
    ("Workload", lambda g: g.row.workload, lambda g: esc(g.row.workload)),
    ("Source", lambda g: " ".join(_kinds(g)), lambda g: " ".join(map(kind_badge, _kinds(g)))),
    (
        "Engine",
        lambda g: f"{g.row.engine} {g.row.engine_version}",
        lambda g: esc(f"{g.row.engine} {g.row.engine_version}"),
    ),
    ("Quant.", lambda g: g.row.quantization or "", lambda g: esc(g.row.quantization or "–")),
    (
        "Load",
        lambda g: g.row.concurrency or g.row.request_rate or 0,
        lambda g: esc(g.row.load_label),
    ),
    ("$/hour", lambda g: g.row.on_demand_usd_per_hour, _hourly_price),
    (
        "Output tok/s",
        lambda g: g.row.output_tokens_per_s,
        lambda g: num(g.row.output_tokens_per_s, 0) + _spread(g),
    ),
    (
        "Total tok/s (prompt + output)",
        lambda g: g.row.total_tokens_per_s,
        lambda g: num(g.row.total_tokens_per_s, 0),
    ),
    (
        "Accepted tok/hour",
        lambda g: _accepted_per_hour(g.row),
        lambda g: num(_accepted_per_hour(g.row), 0),
    ),
    (
        "$/1M accepted, interruptible",
        lambda g: g.row.interruptible_usd_per_million_accepted_tokens,
        lambda g: usd(g.row.interruptible_usd_per_million_accepted_tokens),
    ),
    (
        "$/1M accepted, reserved",
        lambda g: g.row.reserved_usd_per_million_accepted_tokens,
        lambda g: usd(g.row.reserved_usd_per_million_accepted_tokens),
    ),
    (
        "Tok/s per GPU",
        lambda g: g.row.output_tokens_per_s_per_gpu,
        lambda g: num(g.row.output_tokens_per_s_per_gpu, 0),
    ),
    ("% of bound", lambda g: g.row.roofline_pct, lambda g: _nowrap(roofline_cell(g.row))),
    (
        "Tok/s per user",
        lambda g: g.row.tokens_per_s_per_user,
        lambda g: num(g.row.tokens_per_s_per_user, 1),
    ),
    ("TTFT p95 ms", lambda g: g.row.ttft_ms_p95, lambda g: num(g.row.ttft_ms_p95, 0)),
    ("E2E mean ms", lambda g: g.row.e2e_ms_mean, lambda g: num(g.row.e2e_ms_mean, 0)),
    ("E2E p95 ms", lambda g: g.row.e2e_ms_p95, lambda g: num(g.row.e2e_ms_p95, 0)),
    ("E2E p99 ms", lambda g: g.row.e2e_ms_p99, lambda g: num(g.row.e2e_ms_p99, 0)),
    (
        "Failure rate",
        lambda g: g.row.failure_rate,
        lambda g: num(g.row.failure_rate, 1, 100) + ("" if g.row.failure_rate is None else " %"),
    ),
    (
        "GPU util. %",
        lambda g: g.row.gpu_utilization_pct,
        lambda g: num(g.row.gpu_utilization_pct, 0),
    ),
    (
        "Tok/J",
        lambda g: g.row.output_tokens_per_joule,
        lambda g: num(g.row.output_tokens_per_joule, 2),
    ),
    ("Result", lambda g: g.members[0].result_id, _result_links),
]


def _compare_table(groups: list[Group]) -> str:
    head = "".join(f'<th scope="col">{esc(name)}</th>' for name, _value, _text in COLUMNS)
    body = "".join(
        f'<tr data-kind="{esc(" ".join(_kinds(group)))}"'
        + (f' data-replicates="{len(group.members)}"' if len(group.members) > 1 else "")
        + ">"
        + "".join(_cell(value(group), text(group)) for _name, value, text in COLUMNS)
        + "</tr>"
        for group in groups
    )
    return (
        '<div class="im-table-tools" hidden><label>Filter <input type="search" data-filter '
        'placeholder="GPU, engine, …"></label> <label>Source <select data-filter-kind>'
        '<option value="">all</option><option>measured</option><option>reported</option>'
        "</select></label></div>"
        '<div class="im-scroll"><table class="im-table im-compare" data-sortable>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def slot(name: str) -> str:
    """A marker that `registry_pages.on_post_page` swaps for big generated HTML, which so skips
    Markdown, the theme's template and the search plugin (linear in the rows, but slow)."""
    return f'<div data-im-slot="{name}"></div>'


def front_table(rows: list[IndexRow]) -> str:
    """The Pareto front as a table (readable without JavaScript): per GPU × count, the points
    no other point of its sweeps beats on both speed per user and throughput per GPU."""
    front = sorted(
        (row for row in rows if row.on_pareto_front),
        key=lambda row: (row.gpu, row.gpu_count, row.tokens_per_s_per_user or 0),
    )
    if not front:
        return ""
    body = "".join(
        f"<tr><td>{esc(row.gpu_count)} × {esc(row.gpu)}</td><td>{esc(row.load_label)}</td>"
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


def comparable_groups(rows: list[IndexRow]) -> list[tuple[tuple[str, str, str], list[IndexRow]]]:
    """The rows of one model split by workload × scenario (MLPerf's lane apart): ((workload
    key, workload, scenario), rows), in a stable order. Rows of different groups never share a
    table or a chart."""
    groups = rows_by(
        rows,
        lambda row: (
            row.workload_key,
            row.workload,
            row.scenario + (" · MLPerf lane" if row.lane == "mlperf" else ""),
        ),
    )
    return sorted(groups, key=lambda group: (group[0][1], group[0][2], group[0][0]))


def compare_page(
    model: str, profile: str, model_name: str, groups: list[tuple[str, str]] | None = None
) -> str:
    """Markdown of a compare page; `groups` are its tables' (workload, scenario) in order."""
    slug = _slug(model, profile)
    sections = "".join(
        f"## {esc(workload)} · {esc(scenario_text(scenario))}\n\n"
        + slot(f"compare-table-{number}")
        + "\n\n"
        for number, (workload, scenario) in enumerate(groups or [])
    )
    return (
        f"---\ntitle: {front_matter_string(f'{model_name}, {profile}')}\n"
        "hide: [navigation, toc]\n---\n\n"
        f"# {esc(model_name)}: {esc(profile)} traffic\n\n"
        f"Every load point of every result for `{esc(model)}` under the `{esc(profile)}` profile, "
        "one table per workload (input → output lengths, dataset) and scenario: only like "
        "compares with like. Dollar figures use the cheapest usable catalog price of each tier "
        "× GPU count; *measured* rows come from `infermeter bench`, *reported* rows from a cited "
        "public source. Results of the same setup and load from several runs (replicates) share "
        "one row: its figures are their medians, *n* and the range of output tokens/s show their "
        "spread, and each replicate is linked. *% of bound*: output tokens/s as a share of the "
        "most the deployment could physically produce at that load (the roofline bound of the "
        "registry's physics check: memory bandwidth and peak compute from the GPU's specs); "
        "each cell names the bound (its batch and context on hover), or says why there is none. "
        "Click a header to sort. [Data as CSV]("
        + f"{slug}.csv"
        + "), with the workload and scenario of every row.\n\n"
        + sections
    )


def _group_html(rows: list[IndexRow], flagged_gpus: Collection[str] = ()) -> str:
    groups = replicate_groups(rows)
    # An attribute, not a <script>: instant navigation re-runs scripts in the content.
    chart_json = json.dumps(
        plain_data(chart_data([group.row for group in groups])),
        sort_keys=True,
        separators=(",", ":"),
    )
    front = front_table(rows)
    if front:
        sweep = (
            "<p><strong>Pareto front</strong> of the sweeps above (no other point of the same "
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
        sweep = "<p>No sweep (two or more load points of one run) here, so no Pareto front.</p>"
    pareto_chart = (
        '<figure><div class="im-chart" data-chart="pareto"></div><figcaption>Output tokens/s '
        "per GPU against tokens/s per user, one line per GPU × count through its sweep points "
        "(the front is the table above).</figcaption></figure>"
        if front
        else ""
    )
    charts = (
        f'<div class="im-charts" data-chart-data="{esc(chart_json)}">{pareto_chart}'
        '<figure><div class="im-chart" data-chart="cost"></div><figcaption>Lowest $ per 1M '
        "accepted (else output) tokens, on-demand, per GPU × count, from zero."
        "</figcaption></figure></div>"
    )
    buyer = buyer_table(rows, flagged_gpus)
    return buyer + "<p>Every load point:</p>" + _compare_table(groups) + sweep + charts


def compare_slots(rows: list[IndexRow], flagged_gpus: Collection[str] = ()) -> dict[str, str]:
    """The HTML of a compare page's slots: per workload × scenario, the buyer's table, every
    load point, the front and the charts (`flagged_gpus`: GPUs with a flagged catalog price)."""
    return {
        slot(f"compare-table-{number}"): _group_html(group_rows, flagged_gpus)
        for number, (_key, group_rows) in enumerate(comparable_groups(rows))
    }


def pages(
    index: Index, models: Mapping[str, ModelEntry], flagged_gpus: Collection[str] = ()
) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """uri → Markdown of the compare pages; uri → slot marker → HTML of their slots. (Home is
    `answer_pages.home_page`; result pages are written after the build: `result_pages`.)"""
    out: dict[str, str] = {}
    slots: dict[str, dict[str, str]] = {}
    links = []
    groups = rows_by(ranked(index.rows), lambda row: (row.model, row.profile))
    for (model, profile), rows in sorted(groups, key=lambda group: group[0]):
        name = models[model].name if model in models else model
        uri = f"compare/{_slug(model, profile)}.md"
        headings = [
            (workload, scenario) for (_k, workload, scenario), _r in comparable_groups(rows)
        ]
        out[uri] = compare_page(model, profile, name, headings)
        slots[uri] = compare_slots(rows, flagged_gpus)
        links.append(
            f"| [{esc(name)}]({_slug(model, profile)}.md) | {esc(profile)} |"
            f" {len({r.result_id for r in rows})} |"
        )
    table = (
        "| Model | Profile | Results |\n|---|---|---|\n" + "\n".join(links)
        if links
        else "No results yet."
    )
    out["compare/index.md"] = (
        "---\ntitle: Compare\n---\n\n# Compare GPUs\n\nOne page per model and traffic profile.\n\n"
        + table
        + "\n"
    )
    return out, slots


def ranked(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """The rows that rankings and comparisons show: not corrected, not withdrawn, not a point
    cut short by an interrupt (those keep their result page, marked, and stay in the downloads
    with their `correction` or `interrupted`)."""
    return [row for row in rows if row.correction is None and not row.interrupted]


def rows_by(
    rows: Iterable[IndexRow], key: Callable[[IndexRow], Any]
) -> list[tuple[Any, list[IndexRow]]]:
    """The rows grouped by `key`, each group in the index's order."""
    groups: dict[Any, list[IndexRow]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    return list(groups.items())


def _csv(rows: Iterable[Iterable[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow(["" if cell is None else cell for cell in row])
    return buffer.getvalue()


def downloads(
    index: Index,
    gpus: Mapping[str, GpuEntry],
    models: Mapping[str, ModelEntry],
    prices: Mapping[str, PriceEntry],
) -> dict[str, str]:
    """uri → content of the data files and of the Downloads page."""
    files = {
        "data/index.json": index_json(index.rows),
        "data/index.csv": render_csv(index.rows),
        "data/gpus.json": json.dumps([g.model_dump(mode="json") for g in gpus.values()], indent=2)
        + "\n",
        "data/models.json": json.dumps(
            [m.model_dump(mode="json") for m in models.values()], indent=2
        )
        + "\n",
        "data/prices.json": json.dumps(
            [p.model_dump(mode="json") for p in prices.values()], indent=2
        )
        + "\n",
        "data/prices.csv": _csv(
            [
                (
                    "id",
                    "provider",
                    "gpu",
                    "tier",
                    "usd_per_gpu_hour",
                    "gpus_per_instance",
                    "region",
                    "as_of",
                    "source_url",
                )
            ]
            + [
                (
                    p.id,
                    p.provider,
                    p.gpu,
                    p.tier,
                    p.usd_per_gpu_hour,
                    p.gpus_per_instance,
                    p.region,
                    p.as_of,
                    p.source.url,
                )
                for p in prices.values()
            ]
        ),
    }
    groups: dict[str, list[IndexRow]] = defaultdict(list)
    for row in index.rows:
        groups[_slug(row.model, row.profile)].append(row)
    for slug, rows in groups.items():
        files[f"compare/{slug}.csv"] = render_csv(rows)
    for result_id, text in index.texts.items():
        files[f"results/{result_id}.json"] = text
    described = [
        (
            "data/index.json",
            f"The index: every result × load point ({len(index.rows)} rows), with $ figures"
            f" at current prices; column descriptions included.",
        ),
        ("data/index.csv", "The same index as CSV."),
        ("data/gpus.json", f"The GPU catalog ({len(gpus)} GPUs) with sources."),
        (
            "data/models.json",
            f"The model catalog ({len(models)} models) with their config.json fields.",
        ),
        ("data/prices.json", f"The price catalog ({len(prices)} prices) with dates and sources."),
        ("data/prices.csv", "The price catalog as CSV."),
        (
            "assets/catalog.json",
            "What the in-browser calculators read: model configs, GPU memory, cheapest"
            " price per tier.",
        ),
        ("assets/calculators.zip", "The `calculators` Python package the calculator pages run."),
    ]
    files["downloads.md"] = (
        "---\ntitle: Downloads\n---\n\n# Downloads\n\nEverything on this site comes from"
        " these files "
        "(JSON and CSV, built from the registry with the site).\n\n| File | What |\n|---|---|\n"
        + "\n".join(f"| [{name}]({name}) | {text} |" for name, text in described)
        + "\n\nEach result file is linked from its result page.\n"
    )
    return files
