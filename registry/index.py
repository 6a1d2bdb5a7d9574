"""The index: every result × load point as one flat row, with figures derived at current prices.

The site and readers use the index instead of the result files. It is written as JSON and CSV
under content-hashed names (`index-<sha12>.json`, `index-<sha12>.csv`) beside a small, stable
`index.json` manifest that points at them, so a cache can keep the hashed files forever.

Derived figures are never stored in result files; they are computed here by `calculators` from
the measured throughput and the price catalog, so they follow price changes:

- `$/1M output tokens` and `$/1M accepted output tokens` at the on-demand,
  interruptible and reserved prices of the GPU that the figures use (per GPU-hour × GPU count),
  with the price id used;
- output tokens per dollar at each of those prices;
- output tokens/s per GPU; tokens/s per user; output tokens per joule.

A figure whose inputs are missing is null, never estimated. Writing the same registry twice gives
the same bytes: rows sorted by file and point, keys in a fixed order, floats to 6 significant
digits where derived.

This module builds the index and writes its files; its parts, one concept each:
`index_row` (the row and its columns), `index_rows` (one result's rows and derived figures),
`across_rows` (replicate spread and Pareto front, over all rows) and `result_reader` (reading
and checking the result files).
"""

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.registry.across_rows import across_rows
from infermeter.registry.catalog import load_prices
from infermeter.registry.corrections import (
    CORRECTIONS_FILE,
    latest_entries,
    load_corrections,
)
from infermeter.registry.index_row import COLUMN_DESCRIPTIONS, COLUMNS, IndexRow
from infermeter.registry.index_rows import index_rows, ran_on_cpu
from infermeter.registry.licences import DATA_LICENCE
from infermeter.registry.location import catalogs_folder
from infermeter.registry.prices import PriceBook
from infermeter.registry.result_reader import (
    load_results,
    result_files,
)
from infermeter.registry.roofline_share import RooflineBounds
from infermeter.registry.store import (
    canonical_json,
    write_text_atomic,
)

__all__ = [
    "INDEX_SCHEMA_VERSION",
    "MANIFEST_NAME",
    "IndexFiles",
    "build_index",
    "build_index_counted",
    "render_csv",
    "render_json",
    "write_index",
]

INDEX_SCHEMA_VERSION = 1
MANIFEST_NAME = "index.json"
_HASHED_NAME = re.compile(r"^index-[0-9a-f]{12}\.(?:json|csv)$")


@dataclass(frozen=True)
class IndexFiles:
    """What `write_index` wrote."""

    manifest: Path
    json_file: Path
    csv_file: Path
    results: int
    rows: int
    removed: tuple[Path, ...]
    cpu_results: int = 0  # results that ran on the CPU: indexed without rows


def build_index(root: Path) -> tuple[list[IndexRow], int]:
    """The rows of every result under `root` (a registry checkout), and the number of results."""
    rows, result_count, _ = build_index_counted(root)
    return rows, result_count


def build_index_counted(root: Path) -> tuple[list[IndexRow], int, int]:
    """`build_index`, and how many of the results ran on the CPU (they have no rows: see
    `registry.index_rows.index_rows`)."""
    results = load_results(root, result_files(root))
    catalogs = catalogs_folder(root)
    prices = PriceBook(load_prices(catalogs).values())
    bounds = RooflineBounds.from_catalogs(catalogs)
    corrections = latest_entries(load_corrections(root / CORRECTIONS_FILE))
    rows = [
        row
        for file, result in results
        for row in index_rows(result, file, prices, corrections.get(result.id), bounds)
    ]
    cpu_results = sum(1 for _, result in results if ran_on_cpu(result))
    return across_rows(rows), len(results), cpu_results


# --- writing ---------------------------------------------------------------------------------


def render_json(rows: Sequence[IndexRow]) -> str:
    """The JSON index text: columns with their descriptions, then the rows."""
    data = {
        "schema_version": INDEX_SCHEMA_VERSION,
        "licence": DATA_LICENCE,
        "columns": [{"name": name, "description": COLUMN_DESCRIPTIONS[name]} for name in COLUMNS],
        "rows": [row.as_dict() for row in rows],
    }
    # Not canonical_json: rows keep column order, which sorted keys would scramble.
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    """A value as a CSV cell: empty for null, true/false, numbers as Python writes them, and
    a text that a spreadsheet would run as a formula (=, +, -, @, tab or CR first) behind a
    quote ('=HYPERLINK(…) shows as text), the OWASP rule against CSV injection."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return str(value)


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """Every CSV file we write: rows of `csv_cell`s, newline-terminated."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow([csv_cell(value) for value in row])
    return buffer.getvalue()


def render_csv(rows: Sequence[IndexRow]) -> str:
    """The CSV index text: a header row of the column names, empty cells for null."""
    return csv_text([COLUMNS, *(row.as_dict().values() for row in rows)])


def _hashed_name(text: str, suffix: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"index-{digest}.{suffix}"


def write_index(root: Path, out_dir: Path) -> IndexFiles:
    """Index the registry at `root` into `out_dir`; stale hashed index files there are removed.

    Raises InvalidFileError listing every problem when a result file is invalid; nothing is
    written then.
    """
    rows, result_count, cpu_results = build_index_counted(root)
    json_text, csv_text = render_json(rows), render_csv(rows)
    json_name, csv_name = _hashed_name(json_text, "json"), _hashed_name(csv_text, "csv")
    manifest = {
        "schema_version": INDEX_SCHEMA_VERSION,
        "json": json_name,
        "csv": csv_name,
        "results": result_count,
        "rows": len(rows),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / json_name, json_text)
    write_text_atomic(out_dir / csv_name, csv_text)
    # The manifest last: a reader that follows it never finds a missing file.
    write_text_atomic(out_dir / MANIFEST_NAME, canonical_json(manifest))
    removed = []
    for path in sorted(out_dir.iterdir()):
        if _HASHED_NAME.match(path.name) and path.name not in (json_name, csv_name):
            path.unlink()
            removed.append(path)
    return IndexFiles(
        manifest=out_dir / MANIFEST_NAME,
        json_file=out_dir / json_name,
        csv_file=out_dir / csv_name,
        results=result_count,
        rows=len(rows),
        removed=tuple(removed),
        cpu_results=cpu_results,
    )
