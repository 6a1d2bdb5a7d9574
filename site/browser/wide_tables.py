"""Tables a person can read: no column of dashes, and at most `DEFAULT_COLUMNS` columns in view
until the reader asks for the rest.

`filled_columns` finds, at render, the columns with something to show (a column whose every
cell is a dash says only that no row states that figure). `more_columns` puts a table that is
still wider in a box with a checkbox, "Show N more columns": while it is unchecked, CSS alone
(`.im-wide` in infermeter.css) hides the columns after the first `DEFAULT_COLUMNS`, so the
control works without JavaScript and a reader without CSS sees every column. A table therefore
lists the columns a reader needs first, first.

The stdlib only: the calculator pages render their tables with it in the browser too (it is in
the calculators archive, through `calc_html`)."""

import html
import re
from collections.abc import Sequence

DEFAULT_COLUMNS = 10
"""The columns a table shows before the reader asks for more (the CSS's `nth-child(n+11)`)."""

_TAG = re.compile(r"<[^>]*>")
# Dashes, and dashes of a pair of figures ("– / –": E2E p95 / p99).
_DASHES = re.compile(r"[\s–—/-]*")


def is_empty(cell: str) -> bool:
    """Whether a cell (its HTML) shows nothing but dashes."""
    return _DASHES.fullmatch(html.unescape(_TAG.sub("", cell))) is not None


def filled_columns(rows: Sequence[Sequence[str]], count: int) -> list[int]:
    """The indices of the `count` columns where a row of `rows` (the HTML of each cell) shows
    more than a dash; every column when there is no row."""
    if not rows:
        return list(range(count))
    return [index for index in range(count) if any(not is_empty(row[index]) for row in rows)]


def more_columns(block: str, columns: int, noun: str = "columns", keep_last: bool = False) -> str:
    """`block` (HTML holding one table of `columns` columns) with the control that shows its
    columns after the first `DEFAULT_COLUMNS`; `block` itself when it has no more. With
    `keep_last` the last column stays in view (a table's links to its results) and the one
    before the cut is hidden instead."""
    hidden = columns - DEFAULT_COLUMNS
    if hidden <= 0:
        return block
    kind = "im-wide im-keep-last" if keep_last else "im-wide"
    return (
        f'<div class="{kind}"><label class="im-more-columns"><input type="checkbox"> '
        f"Show {hidden} more {noun}</label>{block}</div>"
    )
