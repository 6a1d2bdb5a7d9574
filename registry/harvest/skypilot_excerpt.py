"""Reading one pinned excerpt of a SkyPilot catalog file (`catalogs/v8/<cloud>/vms.csv` in
skypilot-org/skypilot-catalog): its provenance lines (`registry/harvest/pinned_excerpt.py`),
the first of them

    # Excerpt of catalogs/v8/oci/vms.csv in skypilot-org/skypilot-catalog at commit <40 hex>

then the CSV header and rows exactly as the file has them. The columns are read by name: the
files order them differently per cloud.
"""

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.pinned_excerpt import PinnedExcerpt, match_line, read_provenance

_ORIGIN = re.compile(
    r"^Excerpt of (?P<path>catalogs/v\d+/(?P<cloud>[a-z0-9_-]+)/vms\.csv) in "
    r"(?P<repo>[\w.-]+/[\w.-]+) at commit (?P<commit>[0-9a-f]{40})$"
)
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")


@dataclass(frozen=True)
class Excerpt(PinnedExcerpt):
    """One pinned excerpt of a cloud's `vms.csv`: the rows as dicts by column name."""

    cloud: str
    rows: tuple[dict[str, str], ...]


def read_excerpt(file: Path) -> Excerpt:
    """The excerpt in `file`; HarvestError naming the file for anything not in its shape."""
    facts, body = read_provenance(file, "the CSV header and rows")
    origin = match_line(file, _ORIGIN, facts.origin, "Excerpt of")
    reader = csv.DictReader(io.StringIO("\n".join(body) + "\n"))
    missing = [name for name in REQUIRED_COLUMNS if name not in (reader.fieldnames or [])]
    if missing:
        raise HarvestError(f"{file}: the CSV header lacks column(s) {', '.join(missing)}")
    return Excerpt(
        file=file,
        path=origin["path"],
        cloud=origin["cloud"],
        repository=origin["repo"],
        commit=origin["commit"],
        provenance=facts,
        rows=_rows(file, reader),
    )


def _rows(file: Path, reader: "csv.DictReader[str]") -> tuple[dict[str, str], ...]:
    """The rows below the header; HarvestError for none, or for a row whose fields are not
    the header's (a truncated or hand-edited line)."""
    rows: list[dict[str, str]] = []
    for row in reader:
        if None in row or None in row.values():
            raise HarvestError(
                f"{file}: CSV row {len(rows) + 1} (line {reader.line_num} below the provenance) "
                f"does not have the header's {len(reader.fieldnames or [])} fields"
            )
        rows.append(row)
    if not rows:
        raise HarvestError(f"{file}: no rows below the CSV header")
    return tuple(rows)
