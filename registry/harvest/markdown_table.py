"""The cells of a Markdown table row, as the vendors' pages write them (`| a | b |`), and the
figures they print."""

import re

from infermeter.registry.harvest.errors import RowSkipped

_PRINTED_FIGURE = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
"""A figure as the tables print one: digits, thousands grouped in threes by commas, a decimal
point (`12,638.9`, `17.236`)."""


def row_cells(line: str) -> list[str]:
    """The cells of one table row, each stripped: `| B200 | 1,234 |` → `["B200", "1,234"]`."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def printed_figure(printed: str) -> float:
    """A cell's figure as a number; RowSkipped when it is no positive figure as a table prints
    one: a dash, a word, `nan` or `inf`, 0, or a cell cut short (`1,4` of a page cut mid-row,
    which is not 14)."""
    if not _PRINTED_FIGURE.fullmatch(printed):
        raise RowSkipped(f"value {printed!r} is not a number as a table prints one (1,234.5)")
    value = float(printed.replace(",", ""))
    if value <= 0:
        raise RowSkipped(f"value {printed!r} is not a positive figure")
    return value
