"""The table of every load point on a compare page: its columns (`COLUMNS`: header, sort value,
cell HTML) and the table (`compare_table`), plain HTML that `tables.js` sorts and filters.
Every string that comes from a result file is HTML-escaped."""

import html
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from catalog_pages import esc
from gpu_labels import gpu_name
from price_notes import linked_price_cell
from row_groups import Group
from wide_tables import filled_columns, more_columns

from infermeter.registry.index_row import FIGURES, IndexRow
from infermeter.registry.tables import number_text, usd_text

# A figure is written as on a result page and in `bench report` (registry.tables).
num = number_text
usd = usd_text


_TAG = re.compile(r"<[^>]*>")  # a tag of the cells this module writes, to read their text


def _nowrap(text: str) -> str:
    # A cell of short lines that must not wrap into a tall row (`.im-nowrap`).
    return f'<span class="im-nowrap">{text}</span>'


def _sort_key(sort: Any) -> str:
    """A cell's sort key as text; a fraction to 6 significant digits, and never finer than a
    unit past 100,000 (`2062.27`, not `2062.2735531615012`): no column shows more of it."""
    if not isinstance(sort, float) or not math.isfinite(sort) or sort == 0:
        return "" if sort is None else str(sort)
    rounded = round(sort, max(0, 5 - math.floor(math.log10(abs(sort)))))
    return str(int(rounded)) if rounded.is_integer() else repr(rounded)


def _cell(sort: Any, text: str) -> str:
    """A cell with its sort key; none where the key is the text the cell shows, tags aside
    (`tables.js` sorts such a cell by its text: 3,292 keys said twice on DeepSeek-R1's page,
    144 KB, then the GPU's name and the source's kind beside their links and badges)."""
    key = _sort_key(sort)
    if key and key == html.unescape(_TAG.sub("", text)):
        return f"<td>{text}</td>"
    return f'<td data-sort="{esc(key)}">{text}</td>'


def kind_badge(kind: str) -> str:
    return f'<span class="im-kind im-kind-{esc(kind)}">{esc(kind)}</span>'


def _kinds(group: Group) -> list[str]:
    return sorted({member.source_kind for member in group.members})


def mlperf_entry(entry: str) -> str:
    """`result 6.0-0006`, or `run closed/…` for a round whose table gives no result ID."""
    return f"run {entry}" if entry.startswith(("closed/", "open/")) else f"result {entry}"


def mlperf_label(row: IndexRow) -> str:
    """An MLPerf row's round, division, category, scenario, result ID, submitter and system,
    as its messaging guidelines ask wherever MLPerf rows are compared ('' for other rows)."""
    if row.mlperf_result_id is None:
        return ""
    return (
        f"MLPerf {row.mlperf_round} {row.mlperf_division}, {row.mlperf_category}, "
        f"{row.mlperf_scenario}, {mlperf_entry(row.mlperf_result_id)}: {row.mlperf_submitter}, "
        f"{row.mlperf_system}"
    )


def _source_cell(group: Group) -> str:
    badges = " ".join(map(kind_badge, _kinds(group)))
    label = mlperf_label(group.row)
    return badges + (f'<br><small class="im-mlperf">{esc(label)}</small>' if label else "")


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
    price = row.on_demand
    # No title: the line under the link says provider, date and confidence, and the page's
    # "Prices behind the $ figures" each price per GPU-hour (a title said both again per row).
    parts = (
        price.price_provider or "–",
        price.price_as_of or "undated",
        price.price_confidence or "–",
    )
    return linked_price_cell(row, usd(price.usd_per_hour, 2), ", ".join(parts))


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


def gpu_column(gpu_names: Mapping[str, str] | None) -> Column:
    """The GPU column: its name (`gpu_names`: catalog id → name) linked to its page, the catalog
    id in the link's title; sorted by the name shown."""

    def cell(group: Group) -> str:
        gpu_id = group.row.gpu
        return (
            f'<a href="../../gpus/{esc(gpu_id)}/" title="{esc(gpu_id)}">'
            f"{esc(gpu_name(gpu_id, gpu_names))}</a>"
        )

    return ("GPU", lambda g: gpu_name(g.row.gpu, gpu_names), cell)


def _figure(column: str) -> Column:
    """An index column as its figure reads (`registry.index_row.FIGURES`), to whole units."""

    def value(group: Group) -> Any:
        return group.row.column(column)

    return (FIGURES[column].label, value, lambda group: num(value(group), 0))


# The GPU column is `gpu_column`'s (it needs the catalog's names), before all of these. The order
# is the reader's: a table shows its first columns (`wide_tables.DEFAULT_COLUMNS`, the results'
# links kept last) until the reader asks for the rest, so a column that no row fills makes room
# for the next.
COLUMNS: list[Column] = [
    # The $ per 1M tokens next to the GPU: a phone shows them without scrolling.
    (
        "$/1M accepted, on-demand",
        lambda g: g.row.on_demand.usd_per_million_accepted_tokens,
        lambda g: usd(g.row.on_demand.usd_per_million_accepted_tokens),
    ),
    (
        "$/1M output, on-demand",
        lambda g: g.row.on_demand.usd_per_million_output_tokens,
        lambda g: usd(g.row.on_demand.usd_per_million_output_tokens),
    ),
    ("GPUs", lambda g: g.row.gpu_count, lambda g: esc(g.row.gpu_count)),
    ("Quant.", lambda g: g.row.quantization or "", lambda g: esc(g.row.quantization or "–")),
    (
        "Load",
        lambda g: g.row.concurrency or g.row.request_rate or 0,
        lambda g: esc(g.row.load_label),
    ),
    (
        "Output tok/s",
        lambda g: g.row.output_tokens_per_s,
        lambda g: num(g.row.output_tokens_per_s, 0) + _spread(g),
    ),
    (
        "Tok/s per user",
        lambda g: g.row.tokens_per_s_per_user,
        lambda g: num(g.row.tokens_per_s_per_user, 1),
    ),
    _figure("ttft_ms_p95"),
    # Behind "more columns" unless a column above is empty.
    (
        "Tok/s per GPU",
        lambda g: g.row.output_tokens_per_s_per_gpu,
        lambda g: num(g.row.output_tokens_per_s_per_gpu, 0),
    ),
    _figure("e2e_ms_p95"),
    _figure("e2e_ms_p99"),
    ("$/hour", lambda g: g.row.on_demand.usd_per_hour, _hourly_price),
    ("Source", lambda g: " ".join(_kinds(g)) + mlperf_label(g.row), _source_cell),
    ("% of bound", lambda g: g.row.roofline_pct, lambda g: _nowrap(roofline_cell(g.row))),
    (
        "Failure rate",
        lambda g: g.row.failure_rate,
        lambda g: num(g.row.failure_rate, 1, 100) + ("" if g.row.failure_rate is None else " %"),
    ),
    (
        "Accepted tok/hour",
        lambda g: g.row.accepted_output_tokens_per_hour,
        lambda g: num(g.row.accepted_output_tokens_per_hour, 0),
    ),
    (
        "$/1M accepted, interruptible",
        lambda g: g.row.interruptible.usd_per_million_accepted_tokens,
        lambda g: usd(g.row.interruptible.usd_per_million_accepted_tokens),
    ),
    (
        "$/1M accepted, reserved",
        lambda g: g.row.reserved.usd_per_million_accepted_tokens,
        lambda g: usd(g.row.reserved.usd_per_million_accepted_tokens),
    ),
    (
        "Total tok/s (prompt + output)",
        lambda g: g.row.total_tokens_per_s,
        lambda g: num(g.row.total_tokens_per_s, 0),
    ),
    _figure("e2e_ms_mean"),
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
    (
        "Engine",
        lambda g: f"{g.row.engine} {g.row.engine_version}",
        lambda g: esc(f"{g.row.engine} {g.row.engine_version}"),
    ),
    # One workload per table (its heading names it); here for the filter and the CSV's reader.
    ("Workload", lambda g: g.row.workload, lambda g: esc(g.row.workload)),
    ("Result", lambda g: g.members[0].result_id, _result_links),
]


def _row_open(group: Group) -> str:
    return (
        f'<tr data-kind="{esc(" ".join(_kinds(group)))}"'
        + (f' data-replicates="{len(group.members)}"' if len(group.members) > 1 else "")
        + ">"
    )


def compare_table(groups: list[Group], gpu_names: Mapping[str, str] | None = None) -> str:
    """The table of every load point (one row per replicate group), with its filter tools; its
    GPUs by their names in `gpu_names` (catalog id → name). A column no row fills is left out;
    past `wide_tables.DEFAULT_COLUMNS`, the rest wait behind "more columns"."""
    columns = [gpu_column(gpu_names), *COLUMNS]
    cells = [
        [_cell(value(group), text(group)) for _name, value, text in columns] for group in groups
    ]
    shown = filled_columns(cells, len(columns))
    head = "".join(f'<th scope="col">{esc(columns[index][0])}</th>' for index in shown)
    body = "".join(
        _row_open(group) + "".join(row[index] for index in shown) + "</tr>"
        for group, row in zip(groups, cells, strict=True)
    )
    table = (
        '<div class="im-table-tools" hidden><label>Filter <input type="search" data-filter '
        'placeholder="GPU, engine, …"></label> <label>Source <select data-filter-kind>'
        '<option value="">all</option><option>measured</option><option>reported</option>'
        "</select></label></div>"
        '<div class="im-scroll"><table class="im-table im-compare" data-sortable>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )
    return more_columns(table, len(shown), keep_last=True)
