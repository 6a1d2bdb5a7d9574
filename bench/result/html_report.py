"""`infermeter bench report`: one self-contained HTML page for one or more result files.

The page needs nothing from the network: uPlot (the chart library the site vendors: its
minified build of the version `package.json` pins, with its MIT licence, in `bench/assets/uplot`,
package data so that a wheel has it too) and the site's own chart code (`site/assets/charts.js`,
which the site's compare pages call too; `bench/assets/charts.js` links to it) are inlined, and
the chart
data is `registry.charts.chart_data` of the results' index rows, the function the site's compare
pages use. So the page draws the results as the site does: output tokens/s per GPU against
tokens/s per user, and $ per 1M tokens at the figures' on-demand catalog price; then one table
per result with every load point's latency percentiles and cost: `registry.tables`, the table
each result's page on the site shows.

Every string on the page (file names, catalog ids, the chart's labels) is shown as the site
shows one: HTML-escaped, with no control or bidirectional character left
(`registry.plain_text.html_text`).

An asset that is missing all the same (a broken install) is a `ReportError` in one line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from infermeter.bench.errors import BenchError
from infermeter.bench.result.compare import NamedResult
from infermeter.registry.across_rows import with_pareto_front
from infermeter.registry.charts import chart_data
from infermeter.registry.index_row import IndexRow
from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import PriceEntry
from infermeter.registry.plain_text import html_text, plain_data
from infermeter.registry.prices import PriceBook
from infermeter.registry.store import write_output
from infermeter.registry.tables import points_table_html

# Package data: in a checkout and in an installed wheel alike.
ASSETS = Path(__file__).resolve().parents[1] / "assets"
UPLOT_DIR = ASSETS / "uplot"
CHARTS_JS = ASSETS / "charts.js"


# Nothing may load from anywhere: the browser refuses every request the page would make.
_POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
_STYLE = (
    "body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; "
    "padding: 0 1rem; }\n"
    ".im-table { border-collapse: collapse; font-size: 13px; }\n"
    ".im-table th, .im-table td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.5rem; "
    "text-align: right; }\n"
    ".im-table tbody th { text-align: left; }\n"
)


class ReportError(BenchError):
    """The page cannot be made (its inlined assets are missing)."""


def _asset(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        raise ReportError(
            f"{path} is missing: bench report inlines the uPlot and chart code that the "
            "package ships (bench/assets); reinstall infermeter",
            "--html",
        ) from None


def _label(named: NamedResult) -> str:
    identity = named.result.identity
    return f"{named.name}: {identity.gpu.count}× {identity.gpu.id}"


def _table(named: NamedResult, rows: Sequence[IndexRow]) -> str:
    identity = named.result.identity
    price = next((row.on_demand.price_id for row in rows if row.on_demand.price_id), None)
    priced = f"priced at catalog entry {html_text(price)}" if price else "no catalog price"
    return (
        f"<section><h2>{html_text(_label(named))}</h2>"
        f"<p>{html_text(identity.model.id)} · {html_text(identity.engine.name)} "
        f"{html_text(identity.engine.version)} · profile {html_text(identity.workload.profile)}"
        f" · result {html_text(named.result.id)} · {priced}</p>"
        f"{points_table_html(rows)}</section>"
    )


# The heading names this many files at most; a longer list is counted, each is in its table.
TITLE_FILES = 3


def _title(names: Sequence[str]) -> str:
    """`infermeter report: a.json, b.json, c.json and 3,258 more`."""
    shown = ", ".join(names[:TITLE_FILES])
    more = len(names) - TITLE_FILES
    return "infermeter report: " + (shown if more <= 0 else f"{shown} and {more:,} more")


def report_html(results: Sequence[NamedResult], prices: Iterable[PriceEntry]) -> str:
    """The whole page (see the module docstring)."""
    uplot_js = _asset(UPLOT_DIR / "uPlot.iife.min.js")
    uplot_css = _asset(UPLOT_DIR / "uPlot.min.css")
    charts_js = _asset(CHARTS_JS)
    book = PriceBook(prices)
    rows_by_result = [
        (named, with_pareto_front(index_rows(named.result, named.name, book))) for named in results
    ]
    labels = {id(row): _label(named) for named, rows in rows_by_result for row in rows}
    # A point cut short by an interrupt is in its table, marked, but on no curve (as on the site).
    charted = (row for _named, rows in rows_by_result for row in rows if not row.interrupted)
    data = chart_data(charted, lambda row: labels[id(row)], whole_sweeps=True)
    data_json = json.dumps(plain_data(data), sort_keys=True, separators=(",", ":"))
    tables = "".join(_table(named, rows) for named, rows in rows_by_result)
    title = _title([named.name for named in results])
    # No `<` in the data (in JSON it is only ever inside a string, where \u003c reads the
    # same), so neither `</script>` nor `<!--` can end or bend the script; the inlined code
    # never holds either.
    safe_data = data_json.replace("<", "\\u003c")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_POLICY}">
<title>{html_text(title)}</title>
<style>{uplot_css}
{_STYLE}</style></head><body>
<h1>{html_text(title)}</h1>
<div class="im-charts" id="charts">
<figure><div class="im-chart" data-chart="pareto"></div><figcaption>Output tokens/s per GPU
against tokens/s per user, one line per result (the Pareto front).</figcaption></figure>
<figure><div class="im-chart" data-chart="cost"></div><figcaption>Lowest $ per 1M accepted
(else output) tokens, on-demand catalog price, per result.</figcaption></figure>
</div>
{tables}
<script>{uplot_js}</script>
<script type="module">
{charts_js}
drawCharts(document.getElementById("charts"), {safe_data}, window.uPlot);
document.body.dataset.drawn = "1";
</script>
</body></html>
"""


def write_report(
    results: Sequence[NamedResult], prices: Iterable[PriceEntry], output: Path
) -> None:
    """Write the page atomically to `output`."""
    write_output(output, report_html(results, prices))
