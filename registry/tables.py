"""The table of a result's load points, as the site's result pages and `infermeter bench report`
both show it: one list of columns, one way to write a figure, one HTML builder, so a figure
reads the same on the site and in a report (the charts are `registry.charts`).

Cells are built from index rows (`registry.index.IndexRow`), so the $ figures are the index's,
priced at the catalog when the rows were made. Every string is HTML-escaped, with no control
or bidirectional character left (`registry.plain_text`, as the site's pages write strings).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from infermeter.registry.index_row import FIGURES, IndexRow
from infermeter.registry.plain_text import html_text

MISSING = "–"
"""What a cell shows for a figure the result does not state."""
INTERRUPTED_NOTE = "interrupted: only the requests that finished before the stop"
"""What the load of a point cut short by a Ctrl-C or SIGTERM adds (`registry.index`)."""


@dataclass(frozen=True)
class PointColumn:
    """One column: its header, the index row's field it shows, and the digits it is written to
    (`scale` multiplies first, e.g. 100 for a fraction shown in %)."""

    header: str
    field: str
    digits: int
    scale: float = 1.0

    @classmethod
    def of(cls, column: str) -> "PointColumn":
        """The index column `column` as its figure reads (`registry.index_row.FIGURES`)."""
        figure = FIGURES[column]
        return cls(figure.label, column, figure.digits, figure.scale)


POINT_COLUMNS: tuple[PointColumn, ...] = tuple(
    PointColumn.of(column)
    for column in (
        # The reader's order: the site shows a table's first columns until asked for the rest.
        "on_demand_usd_per_million_accepted_tokens",
        "on_demand_usd_per_million_output_tokens",
        "output_tokens_per_s_per_gpu",
        "tokens_per_s_per_user",
        "ttft_ms_p95",
        "ttft_ms_p99",
        "tpot_ms_p99",
        "e2e_ms_p99",
        "failure_rate",
        "on_demand_usd_per_hour",
        "ttft_ms_p50",
        "tpot_ms_p50",
        "e2e_ms_p95",
        # a static batch's source may state this alone (the whole batch's time)
        "e2e_ms_mean",
    )
)
"""The buyer's figures of a load point: speed, latency percentiles, failures and cost."""


def number_text(value: float | None, digits: int = 2, scale: float = 1.0) -> str:
    """`1,234.5`-style text of a figure, or `MISSING`."""
    return MISSING if value is None else f"{value * scale:,.{digits}f}"


def usd_text(value: float | None, digits: int = 3) -> str:
    """`$0.123`-style text of a dollar figure, or `MISSING`."""
    return MISSING if value is None else f"${value:,.{digits}f}"


def point_cells(row: IndexRow, columns: Sequence[PointColumn] = POINT_COLUMNS) -> list[str]:
    """The text of each column's figure for one load point."""
    return [number_text(row.column(c.field), c.digits, c.scale) for c in columns]


def _text(value: str) -> str:
    return html_text(value)


def derived_note(rows: Iterable[IndexRow]) -> str:
    """What the $ columns are: figures infermeter derives from catalog prices, never stored in
    a result; and for MLPerf's lane (its messaging guidelines) that MLCommons did not verify
    them."""
    # the price `lookup.cheapest_prices` picks: not always the cheapest offer listed
    note = (
        "$ figures are derived by infermeter from the on-demand catalog price that figures use "
        "for the GPU (a recent official list price first)"
    )
    if any(row.lane.startswith("mlperf") for row in rows):
        return f"{note}, not verified by MLCommons."
    return f"{note}."


def stated_columns(
    rows: Sequence[IndexRow], columns: Sequence[PointColumn] = POINT_COLUMNS
) -> list[PointColumn]:
    """Those of `columns` whose figure a row of `rows` states."""
    return [c for c in columns if any(row.column(c.field) is not None for row in rows)]


def _row_head(row: IndexRow) -> str:
    if row.interrupted:
        label = f"{row.load_label} ({INTERRUPTED_NOTE})"
        return f'<tr data-interrupted="1"><th scope="row">{_text(label)}</th>'
    return f'<tr><th scope="row">{_text(row.load_label)}</th>'


def points_table_html(
    rows: Iterable[IndexRow], columns: Sequence[PointColumn] = POINT_COLUMNS
) -> str:
    """A `<table>` with one row per load point: its load in words (a point cut short by an
    interrupt says so), then those of `columns` that a point states (a column of dashes only
    says that none does); its caption says where the $ figures come from (`derived_note`)."""
    rows = list(rows)
    columns = stated_columns(rows, columns)
    head = "".join(f'<th scope="col">{_text(c.header)}</th>' for c in columns)
    body = "".join(
        _row_head(row)
        + "".join(f"<td>{_text(text)}</td>" for text in point_cells(row, columns))
        + "</tr>"
        for row in rows
    )
    return (
        f'<table class="im-table im-points"><caption>{_text(derived_note(rows))}</caption>'
        '<thead><tr><th scope="col">load</th>'
        f"{head}</tr></thead><tbody>{body}</tbody></table>"
    )
