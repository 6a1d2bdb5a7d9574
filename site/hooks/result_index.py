"""The registry's results as the site reads them: every result file validated by
`registry.index.load_results` (schema, model, place), then parsed once more here.

Validation is the build's biggest cost (about 2-3 ms a file, mostly the JSON Schema check), and
each file's check is independent, so it runs in worker processes, one per CPU, on chunks of
files; every problem of every chunk is collected, then the load fails once, as `load_results`
does. The parent then parses the (now known-good) texts with the model, which is cheap.
"""

import gc
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from registry.catalog import load_prices
from registry.corrections import CORRECTIONS_FILE, latest_entries, load_corrections
from registry.errors import InvalidFileError, Problem
from registry.index import (
    IndexRow,
    across_rows,
    index_rows,
    load_results,
    result_files,
)
from registry.models import Result
from registry.roofline_share import RooflineBounds
from registry.store import parse_result

CHUNK_FILES = 250
# Below this many files, starting worker processes costs more than it saves.
PARALLEL_FROM_FILES = 400


@dataclass(frozen=True)
class Index:
    rows: list[IndexRow]
    results: dict[str, Result]  # result id → result
    texts: dict[str, str]  # result id → the file's text


def _problems(root: Path, files: Sequence[Path]) -> list[Problem]:
    try:
        load_results(root, files)
    except InvalidFileError as error:
        return list(error.problems)
    return []


def validate(
    root: Path,
    files: Sequence[Path],
    workers: int | None = None,
    chunk_files: int = CHUNK_FILES,
    parallel_from: int = PARALLEL_FROM_FILES,
) -> None:
    """Raise InvalidFileError with every problem of every file, as `load_results` would."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(files) < parallel_from:
        problems = _problems(root, files)
    else:
        chunks = [files[start : start + chunk_files] for start in range(0, len(files), chunk_files)]
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks))) as pool:
            found = pool.map(_problems, [root] * len(chunks), chunks)
            problems = [problem for chunk in found for problem in chunk]
    if problems:
        raise InvalidFileError(problems)


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
    files = result_files(root)
    validate(root, files)
    catalogs = root / "registry" / "catalogs"
    prices = list(load_prices(catalogs / "prices.yaml").values())
    bounds = RooflineBounds.from_catalogs(catalogs)
    corrections = latest_entries(load_corrections(root / CORRECTIONS_FILE))
    results: dict[str, Result] = {}
    texts: dict[str, str] = {}
    rows: list[IndexRow] = []
    with _young_collections_only():
        for path in files:
            relative = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            result = parse_result(text, relative)
            results[result.id], texts[result.id] = result, text
            rows.extend(index_rows(result, relative, prices, corrections.get(result.id), bounds))
    return Index(rows=across_rows(rows), results=results, texts=texts)
