"""The cells of a Markdown table row, as the vendors' pages write them (`| a | b |`)."""


def row_cells(line: str) -> list[str]:
    """The cells of one table row, each stripped: `| B200 | 1,234 |` → `["B200", "1,234"]`."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]
