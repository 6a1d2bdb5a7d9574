"""The registry's results as the site reads them: every result file validated and parsed once
by `registry.index.load_result_files` (schema, model, place), every problem of every file collected
before the build fails.

Validation was the build's biggest cost while every file took the pure-Python JSON Schema walk
(about 8 ms a file, so it ran in worker processes); the compiled gate of
`registry.checks.schema_gate` proves a valid file in well under a millisecond, and one pass in
this process costs less than starting workers and parsing each file a second time in the parent.
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.across_rows import across_rows
from infermeter.registry.catalog import load_prices
from infermeter.registry.corrections import CORRECTIONS_FILE, latest_entries, load_corrections
from infermeter.registry.index_row import IndexRow
from infermeter.registry.index_rows import index_rows
from infermeter.registry.location import catalogs_folder
from infermeter.registry.models import Result
from infermeter.registry.prices import PriceBook
from infermeter.registry.result_reader import load_result_files, result_files
from infermeter.registry.roofline_share import RooflineBounds


@dataclass(frozen=True)
class Index:
    rows: list[IndexRow]
    results: dict[str, Result]  # result id → result
    texts: dict[str, str]  # result id → the file's text


@contextmanager
def _young_collections_only() -> Iterator[None]:
    # Parsing allocates many long-lived objects; the collector's full passes over a heap that
    # keeps growing would make the load superlinear. Nothing here makes reference cycles.
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1_000_000)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.freeze()  # what is loaded lives until the build ends: keep it out of later passes


def load_index(root: Path) -> Index:
    """Every valid result under `root` and its index rows, each marked with its entry in the
    corrections file; an invalid file raises."""
    catalogs = catalogs_folder(root)
    prices = PriceBook(load_prices(catalogs).values())
    bounds = RooflineBounds.from_catalogs(catalogs)
    corrections = latest_entries(load_corrections(root / CORRECTIONS_FILE))
    results: dict[str, Result] = {}
    texts: dict[str, str] = {}
    rows: list[IndexRow] = []
    with _young_collections_only():
        for loaded in load_result_files(root, result_files(root)):
            result = loaded.result
            results[result.id], texts[result.id] = result, loaded.text
            rows.extend(index_rows(result, loaded.file, prices, corrections.get(result.id), bounds))
    return Index(rows=across_rows(rows), results=results, texts=texts)
